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

from hf_helpers import (Hub, Proxy, blobs, hub, needs_npm, npm_client, replay,  # noqa: F401 (hub)
                        xet_requests)

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
    # The stand-in advertises Xet as the Hub does; direct, the client's Xet switch must be off
    # (the stand-in has no CAS). Through Ferry it is on, its default.
    direct = ok(npm_client("snapshot", hub.url, "org/tiny-model", "main", tmp_path / "direct", xet=False))
    upstream_before = len(hub.log())
    cold = ok(npm_client("snapshot", proxy.hf, "org/tiny-model", "main", tmp_path / "c1"))
    assert not xet_requests(hub.log()[upstream_before:])
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


def test_xet_era_huggingface_hub_snapshot_comes_through_the_cache(hub, proxy, tmp_path):
    """huggingface_hub 1.x with hf_xet (its default), replayed: straight to the Hub it takes the
    Xet road for every LFS file; through Ferry every file comes over HTTP through the cache,
    nothing asks for a Xet token or reaches the CAS, and a second machine reads nothing upstream."""
    direct = replay("snapshot", hub.url, "org/tiny-model", "main", tmp_path / "direct")
    assert direct.returncode == 4, direct.stderr + direct.stdout
    went = json.loads(direct.stdout)
    # The stand-in is Xet-era: the tree's xetHash sent the client to xet-read-token with no HEAD.
    assert sorted(went["xet"]) == ["model.safetensors", "nested/shard-00001.bin", "xet.safetensors"]
    assert xet_requests(hub.log()) and any(e["server"] == "cas" for e in hub.log())
    truth = ok(replay("snapshot", hub.url, "org/tiny-model", "main", tmp_path / "truth",
                      env={"HF_HUB_DISABLE_XET": "1"}))["files"]
    before = len(hub.log())
    a = ok(replay("snapshot", proxy.hf, "org/tiny-model", "main", tmp_path / "machine-a"))
    assert a["files"] == truth and a["xet"] == [] and not a["tree_cached"]
    cold = hub.log()[before:]
    assert not xet_requests(cold), xet_requests(cold)
    assert all(e["ua"] == "ferry-serve" for e in cold if e["server"] == "cdn")
    # The tree listing through Ferry carries no xetHash, so the client's own tree cache holds none.
    trees = list((tmp_path / "machine-a").rglob("trees/*.json"))
    assert trees and "xet_hash" not in trees[0].read_text()
    before = len(hub.log())
    b = ok(replay("snapshot", proxy.hf, "org/tiny-model", "main", tmp_path / "machine-b"))
    assert b["files"] == truth and b["xet"] == []
    assert hub.log()[before:] == [], "the second machine reached upstream"
    # The same machine again, its tree cache warm: nothing to fetch, nothing upstream.
    again = ok(replay("snapshot", proxy.hf, "org/tiny-model", "main", tmp_path / "machine-a"))
    assert again["tree_cached"] and again["files"] == truth and hub.log()[before:] == []
    for path in ("/hf/api/models/org/tiny-model/revision/main",
                 "/hf/api/models/org/tiny-model/tree/main?recursive=true&expand=true"):
        status, h, body = proxy.request(path)
        assert status == 200 and not xet_keys(json.loads(body)), body
    status, _, body = proxy.request("/hf/api/models/org/tiny-model/paths-info/main", "POST",
                                    {"Content-Type": "application/json"},
                                    json.dumps({"paths": ["model.safetensors"], "expand": True}).encode())
    assert status == 200 and not xet_keys(json.loads(body)) and json.loads(body)[0]["lfs"]


def test_xet_token_requests_are_refused_with_the_way_out(hub, proxy, tmp_path):
    """A machine whose cache was filled from huggingface.co itself holds tree listings naming Xet
    hashes; through Ferry that client asks for a Xet token, which Ferry refuses at once (403,
    never upstream) with the fix; HF_HUB_DISABLE_XET=1 then downloads through the cache."""
    cache = tmp_path / "was-direct"
    assert replay("snapshot", hub.url, "org/tiny-model", "main", cache).returncode == 4
    before = len(hub.log())
    stale = replay("snapshot", proxy.hf, "org/tiny-model", "main", cache)
    assert stale.returncode == 4
    errors = " ".join(json.loads(stale.stdout)["errors"])
    assert "HTTP 403" in errors and "HF_HUB_DISABLE_XET=1" in errors and "trees/" in errors
    for path in ("/hf/api/models/org/tiny-model/xet-read-token/main",
                 "/hf/api/datasets/org/tiny-dataset/xet-read-token/main",
                 "/hf/api/models/org/tiny-model/xet-write-token/main"):
        status, h, _ = proxy.request(path)
        assert status == 403 and h["X-Error-Code"] == "XetNotServed", path
    assert not xet_requests(hub.log()[before:])
    fixed = ok(replay("snapshot", proxy.hf, "org/tiny-model", "main", cache,
                      env={"HF_HUB_DISABLE_XET": "1"}))
    assert fixed["xet"] == [] and len(fixed["files"]) == 6
    assert not xet_requests(hub.log()[before:])


def test_npm_client_asking_for_xet_file_info_gets_the_bytes(hub, proxy):
    """@huggingface/hub's Xet switch is a resolve answered as application/vnd.xet-fileinfo+json
    (it asks with Accept and Range: bytes=0-0); the stand-in answers so, Ferry answers bytes."""
    accept = {"Accept": "application/vnd.xet-fileinfo+json, */*", "Range": "bytes=0-0"}
    status, h, body = hub_request(hub, "/org/tiny-model/resolve/main/model.safetensors", accept)
    assert status == 200 and h["Content-Type"] == "application/vnd.xet-fileinfo+json"
    status, h, body = proxy.request("/hf/org/tiny-model/resolve/main/model.safetensors", headers=accept)
    assert status == 206 and h["Content-Type"] == "application/octet-stream" and len(body) == 1
    assert not [k for k in h.keys() if k.lower().startswith("x-xet")] and "Link" not in h


def xet_keys(value):
    """Every object member of a JSON value whose name starts with "xet", at any depth."""
    if isinstance(value, dict):
        return [k for k in value if k.lower().startswith("xet")] + [
            x for v in value.values() for x in xet_keys(v)]
    return [x for v in value for x in xet_keys(v)] if isinstance(value, list) else []


def hub_request(hub, path, headers):
    import urllib.request
    with urllib.request.urlopen(urllib.request.Request(hub.url + path, headers=headers), timeout=30) as r:
        return r.status, r.headers, r.read()


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
