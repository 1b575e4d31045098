"""ferry serve /hf with real clients against the Hub + CDN stand-in (docs/semantics/hf.md):
npm @huggingface/hub (snapshotDownload, downloadFileToCacheDir with hubUrl), huggingface_hub's
request sequence replayed (tests/tools/hf_hub_replay.py), curl-level checks through urllib.
What is asserted is what users rely on: identical bytes, a warm run makes zero upstream
requests, clients never see the CDN, upstream faults never publish a blob and never become 404.
"""
import concurrent.futures
import hashlib
import json
import pathlib
import subprocess
import time

import pytest

from hf_helpers import Hub, Proxy, blobs, hub, needs_npm, npm_client, replay  # noqa: F401 (hub)

pytestmark = needs_npm()

TOKEN = "hf_granted"



@pytest.fixture
def proxy(ferry_bin, tmp_path, hub):
    p = Proxy(ferry_bin, tmp_path / "data", hub, "--stall-timeout", "3")
    yield p
    p.stop()


def tree_digests(root):
    root = pathlib.Path(root)
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def ok(p):
    assert p.returncode == 0, p.stderr + p.stdout
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_npm_snapshot_cold_then_warm_makes_no_upstream_request(hub, proxy, tmp_path):
    direct = ok(npm_client("snapshot", hub.url, "org/tiny-model", "main", tmp_path / "direct"))
    upstream_before = len(hub.log())
    cold = ok(npm_client("snapshot", proxy.hf, "org/tiny-model", "main", tmp_path / "c1"))
    assert tree_digests(cold["dir"]) == tree_digests(direct["dir"])
    cold_log = hub.log()[upstream_before:]
    cdn = [e for e in cold_log if e["server"] == "cdn"]
    # Each LFS blob came from the CDN once, always to ferry, never to the client.
    assert cdn and all(e["ua"] == "ferry-serve" for e in cdn)
    assert len({e["path"].split("?")[0] for e in cdn}) == len(cdn) == 3
    warm = ok(npm_client("snapshot", proxy.hf, "org/tiny-model", "main", tmp_path / "c2"))
    assert tree_digests(warm["dir"]) == tree_digests(direct["dir"])
    assert len(hub.log()) == upstream_before + len(cold_log), "the warm run reached upstream"
    status, _, metrics = proxy.request("/metrics")
    assert status == 200 and b"ferry_cache_hits_total" in metrics


def test_npm_files_by_tag_dataset_rename_and_gated_token(hub, proxy, tmp_path):
    tag = ok(npm_client("file", proxy.hf, "org/tiny-model", "v1.0", "config.json", tmp_path / "a"))
    assert pathlib.Path(tag["path"]).read_bytes() == b'{"hidden": 8}\n'
    ds = ok(npm_client("file", proxy.hf, "datasets/org/tiny-dataset", "main",
                       "data/train-00000.parquet", tmp_path / "b"))
    assert ds["size"] == 250_000
    renamed = ok(npm_client("file", proxy.hf, "org/old-name", "main", "README.md", tmp_path / "c"))
    assert pathlib.Path(renamed["path"]).read_bytes() == b"# tiny\n"
    # Gated: no token is refused by upstream; the granted token gets the file; afterwards the
    # cached copy still goes to nobody else.
    assert npm_client("file", proxy.hf, "org/gated-model", "main", "weights.bin", tmp_path / "d").returncode != 0
    granted = ok(npm_client("file", proxy.hf, "org/gated-model", "main", "weights.bin",
                            tmp_path / "e", TOKEN))
    assert granted["size"] == 100_000
    for token in ([], ["hf_wrong"]):
        p = npm_client("file", proxy.hf, "org/gated-model", "main", "weights.bin", tmp_path / "f", *token)
        assert p.returncode != 0, "a cached gated file reached a client upstream did not accept"
    # The gated repo's card is public (as on the Hub); reading it proves nothing about files.
    status, _, card = proxy.request("/hf/api/models/org/gated-model")
    assert status == 200 and json.loads(card)["gated"] is True
    status, headers, _ = proxy.request("/hf/org/gated-model/resolve/main/weights.bin", "HEAD")
    assert status == 401 and headers["X-Error-Code"] == "GatedRepo"
    assert TOKEN not in proxy.log()


def test_resolve_headers_ranges_and_no_xet(hub, proxy):
    path = "/hf/org/tiny-model/resolve/main/model.safetensors"
    status, h, _ = proxy.request(path, "HEAD")
    assert status == 200 and len(h["X-Repo-Commit"]) == 40
    size = int(h["X-Linked-Size"])
    assert h["Content-Length"] == str(size) and h["Accept-Ranges"] == "bytes"
    assert h["X-Linked-Etag"] == h["ETag"] and "Location" not in h
    status, h, body = proxy.request(path, headers={"Range": "bytes=0-0"})
    assert status == 206 and h["Content-Range"] == f"bytes 0-0/{size}" and len(body) == 1
    _, _, whole = proxy.request(path)
    assert hashlib.sha256(whole).hexdigest() == h["X-Linked-Etag"].strip('"')
    status, h, body = proxy.request(path, headers={"Range": f"bytes={size - 10}-{size + 999}"})
    assert status == 206 and h["Content-Range"] == f"bytes {size - 10}-{size - 1}/{size}"
    assert body == whole[-10:]
    status, h, _ = proxy.request(path, headers={"Range": f"bytes={size}-"})
    assert status == 416 and h["Content-Range"] == f"bytes */{size}"
    status, h, _ = proxy.request("/hf/org/tiny-model/resolve/main/xet.safetensors", "HEAD")
    assert status == 200
    assert not [k for k in h.keys() if k.lower().startswith("x-xet")] and "Link" not in h
    # Paged tree: the next link points at the proxy and works there.
    status, h, body = proxy.request("/hf/api/models/org/tiny-model/tree/main?recursive=true")
    assert status == 200 and h["Link"].startswith(f"<{proxy.hf}/api/models/org/tiny-model/tree/main?")
    nxt = h["Link"][1:h["Link"].index(">")]
    status, _, page2 = proxy.request(nxt[len(proxy.url):])
    assert status == 200 and json.loads(page2) != json.loads(body)
    status, _, info = proxy.request("/hf/api/models/org/tiny-model/paths-info/main", "POST",
                                    {"Content-Type": "application/json"},
                                    json.dumps({"paths": ["config.json"], "expand": True}).encode())
    assert status == 200 and json.loads(info)[0]["path"] == "config.json"
    for bad in ("/hf/org/tiny-model/resolve/main/../../../etc/passwd",
                "/hf/org/tiny-model/resolve/main/%2e%2e/x", "/hf/..%2fetc/resolve/main/x"):
        assert proxy.request(bad)[0] in (400, 404), bad


def test_huggingface_hub_sequence_with_resume_and_errors(hub, proxy, tmp_path):
    cache = tmp_path / "hfcache"
    p = replay(proxy.hf, "org/tiny-model", "main", "model.safetensors", cache, "--stop-after", 1_000_000)
    assert p.returncode == 3, p.stderr
    done = ok(replay(proxy.hf, "org/tiny-model", "main", "model.safetensors", cache))
    assert done["resumed_from"] == 1_000_000 and done["sha256"] == done["etag"]
    assert done["head_status"] == 200  # the proxy answers HEAD itself: no redirect to follow
    small = ok(replay(proxy.hf, "org/old-name", "main", "nested/vocab.txt", cache))
    assert pathlib.Path(small["path"]).read_bytes() == b"a\nb\nc\n"
    missing = replay(proxy.hf, "org/tiny-model", "main", "nope.txt", cache)
    assert json.loads(missing.stdout)["error_code"] == "EntryNotFound"  # upstream's own answer
    hub.stop()
    status, h, _ = proxy.request("/hf/org/tiny-model/resolve/main/README.md", "HEAD")
    # Known before upstream went down: still served.
    assert status in (200, 502)
    status, h, _ = proxy.request("/hf/org/tiny-model/resolve/main/never-seen.bin", "HEAD")
    assert status in (502, 504) and "X-Error-Code" not in h, "upstream down must never look like EntryNotFound"


@pytest.mark.parametrize("fault,times", [("corrupt", 1), ("503", 20), ("stall", 1), ("truncate", 1)])
def test_upstream_faults_never_publish_and_the_next_request_works(hub, proxy, fault, times):
    path = "/hf/org/tiny-model/resolve/main/nested/shard-00001.bin"
    _, h, _ = proxy.request(path, "HEAD")
    sha = h["X-Linked-Etag"].strip('"')
    hub.fault(fault, times)
    status, _, body = (None, None, b"")
    try:
        status, _, body = proxy.request(path)
    except Exception:  # an aborted body: the client sees an error, never a short file as whole
        pass
    if fault == "truncate":
        # A connection cut mid-body is resumed from where it stopped: the client gets it whole.
        assert hashlib.sha256(body).hexdigest() == sha
    else:
        assert hashlib.sha256(body).hexdigest() != sha
        assert sha not in blobs(proxy.data), "a blob was published from a faulty upstream"
    hub.fault("", 0)
    status, _, body = proxy.request(path)
    assert status == 200 and hashlib.sha256(body).hexdigest() == sha
    assert blobs(proxy.data)[sha] == len(body)


def test_offline_serves_the_cached_snapshot_and_504_for_the_rest(ferry_bin, hub, proxy, tmp_path):
    ok(npm_client("snapshot", proxy.hf, "org/tiny-model", "main", tmp_path / "c1"))
    proxy.stop()
    hub.stop()
    offline = Proxy(ferry_bin, proxy.data, hub, "--offline")
    try:
        again = ok(npm_client("snapshot", offline.hf, "org/tiny-model", "main", tmp_path / "c2"))
        assert tree_digests(again["dir"]) == tree_digests(
            pathlib.Path(tmp_path / "c1/models--org--tiny-model/snapshots") / pathlib.Path(again["dir"]).name)
        status, h, _ = offline.request("/hf/org/tiny-model/resolve/v1.0/model.safetensors", "HEAD")
        assert status == 504 and "X-Error-Code" not in h
    finally:
        offline.stop()


def test_sixteen_concurrent_cold_clients_make_one_upstream_fetch(ferry_bin, tmp_path):
    size = (1 << 30) if pytest.importorskip("os").environ.get("FERRY_SLOW") else (256 << 20)
    hub = Hub(tmp_path / "bighub", lfs_size=size)
    proxy = Proxy(ferry_bin, tmp_path / "bigdata", hub)
    try:
        url = proxy.hf + "/org/tiny-model/resolve/main/model.safetensors"

        def fetch(_):
            start = time.monotonic()
            p = subprocess.run(f"curl -sS --fail -o - '{url}' | sha256sum", shell=True,
                               capture_output=True, text=True, timeout=600)
            assert p.returncode == 0, p.stderr
            return p.stdout.split()[0], time.monotonic() - start

        with concurrent.futures.ThreadPoolExecutor(16) as pool:
            results = list(pool.map(fetch, range(16)))
        _, h, _ = proxy.request(url[len(proxy.url):], "HEAD")
        sha = h["X-Linked-Etag"].strip('"')
        assert {r[0] for r in results} == {sha}
        cdn_gets = [e for e in hub.log() if e["server"] == "cdn" and e["method"] == "GET"]
        assert len(cdn_gets) == 1, cdn_gets
        heads = [e for e in hub.log() if e["server"] == "hub" and e["method"] == "HEAD"]
        assert len(heads) == 1, "concurrent cold requests each asked upstream for the metadata"
        assert blobs(proxy.data)[sha] == size
    finally:
        proxy.stop()
        hub.stop()
