"""ferry serve /hf when things go wrong or scale out (docs/semantics/cache.md): kill -9 in the
middle of a fill (restart resumes from the spool, never serves half a blob), two servers sharing
one S3 bucket (RGW) as their cache, and `ferry serve prewarm` filling the cache ahead of clients.
"""
import concurrent.futures
import hashlib
import signal
import subprocess
import time

from conftest import base_env

from hf_helpers import Proxy, blobs, hub, needs_npm, npm_client  # noqa: F401 (hub)

pytestmark = needs_npm()
MODEL = "/hf/org/tiny-model/resolve/main/model.safetensors"


def sha_of(proxy, path):
    _, h, _ = proxy.request(path, "HEAD")
    return h["X-Linked-Etag"].strip('"'), int(h["X-Linked-Size"])


def test_kill_9_mid_fill_then_restart_resumes_and_never_serves_half(ferry_bin, hub, tmp_path):
    data = tmp_path / "data"
    proxy = Proxy(ferry_bin, data, hub)
    sha, size = sha_of(proxy, MODEL)
    hub.fault("stall", 1)  # the CDN sends half the file, then nothing
    client = subprocess.Popen(["curl", "-sS", "-o", tmp_path / "partial", proxy.url + MODEL],
                              stderr=subprocess.DEVNULL)
    spool = data / "cache/spool"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        parts = [p for p in spool.iterdir() if p.stat().st_size >= size // 2] if spool.exists() else []
        if parts:
            break
        time.sleep(0.05)
    assert parts, "the fill never reached half the file"
    proxy.proc.send_signal(signal.SIGKILL)
    proxy.proc.wait()
    client.wait(timeout=30)
    assert (tmp_path / "partial").stat().st_size < size, "a client got a whole file from half a fill"
    assert sha not in blobs(data)
    again = Proxy(ferry_bin, data, hub)
    try:
        status, _, body = again.request(MODEL)
        assert status == 200 and hashlib.sha256(body).hexdigest() == sha
        cdn = [e for e in hub.log() if e["server"] == "cdn" and e["method"] == "GET"]
        assert cdn[-1]["range"] == f"bytes={size // 2}-{size - 1}" or cdn[-1]["range"] == f"bytes={size // 2}-", cdn[-1]
        assert blobs(data)[sha] == size
    finally:
        again.stop()


def test_two_servers_share_one_s3_bucket_as_their_cache(ferry_bin, rgw, hub, tmp_path, prefix):
    env = base_env(rgw)
    a = Proxy(ferry_bin, prefix + "nas", hub, env=env, log=tmp_path / "a.log")
    b = Proxy(ferry_bin, prefix + "nas", hub, env=env, log=tmp_path / "b.log")
    try:
        sha, _ = sha_of(a, MODEL)
        # Both cold at once: each fills and publishes the same content address; neither breaks.
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            bodies = list(pool.map(lambda p: p.request(MODEL)[2], [a, b, a, b]))
        assert {hashlib.sha256(x).hexdigest() for x in bodies} == {sha}
        before = len(hub.log())
        for p in (a, b):  # both now hit the shared blob
            assert hashlib.sha256(p.request(MODEL)[2]).hexdigest() == sha
        assert [e for e in hub.log()[before:] if e["server"] == "cdn"] == []
        c = Proxy(ferry_bin, prefix + "nas", hub, "--offline", env=env, log=tmp_path / "c.log")
        try:  # a third server, offline, finds everything in the bucket
            assert hashlib.sha256(c.request(MODEL)[2]).hexdigest() == sha
        finally:
            c.stop()
    finally:
        a.stop()
        b.stop()


def test_prewarm_fills_the_cache_before_clients_come(ferry_bin, hub, tmp_path):
    proxy = Proxy(ferry_bin, tmp_path / "data", hub)
    try:
        env = {"PATH": "/usr/bin:/bin", "HF_TOKEN": "hf_granted"}
        p = subprocess.run([ferry_bin, "serve", "prewarm", "--server", proxy.url, "--hf",
                            "org/tiny-model", "--hf", "datasets/org/tiny-dataset@main",
                            "--hf", "org/gated-model"], env=env, capture_output=True, text=True,
                           timeout=120)
        assert p.returncode == 0, p.stderr
        assert "prewarmed 10 files" in p.stdout and "hf_granted" not in p.stderr + p.stdout
        logged = len(hub.log())
        before = [e for e in hub.log() if e["server"] == "cdn"]
        snap = npm_client("snapshot", proxy.hf, "org/tiny-model", "main", tmp_path / "c")
        assert snap.returncode == 0, snap.stderr
        after = hub.log()
        assert [e for e in after if e["server"] == "cdn"] == before, "a prewarmed file was fetched again"
        assert not [e for e in after[logged:] if "/resolve/" in e["path"]]
        bad = subprocess.run([ferry_bin, "serve", "prewarm", "--server", proxy.url, "--hf",
                              "org/no-such-repo"], env=env, capture_output=True, text=True, timeout=60)
        assert bad.returncode == 1 and "org/no-such-repo" in bad.stderr
    finally:
        proxy.stop()


def test_size_cap_evicts_least_recently_used_blobs(ferry_bin, hub, tmp_path):
    data = tmp_path / "data"
    proxy = Proxy(ferry_bin, data, hub, "--max-cache-size", "500K")
    try:
        files = ["nested/shard-00001.bin", "xet.safetensors"]  # 300,000 + 200,000 bytes
        for f in files:
            assert proxy.request(f"/hf/org/tiny-model/resolve/main/{f}")[0] == 200
        status, _, body = proxy.request("/hf/datasets/org/tiny-dataset/resolve/main/data/train-00000.parquet")
        assert status == 200 and len(body) == 250_000
        kept = blobs(data)
        assert sum(kept.values()) <= 500 * 1024 and 300_000 not in kept.values(), kept
        _, _, metrics = proxy.request("/metrics")
        assert b"ferry_cache_evictions_total 1" in metrics
        # The evicted file is simply fetched again.
        status, _, body = proxy.request("/hf/org/tiny-model/resolve/main/nested/shard-00001.bin")
        assert status == 200 and len(body) == 300_000
    finally:
        proxy.stop()


def test_full_disk_is_a_clear_error_and_nothing_is_half_published(ferry_bin, hub, tmp_path):
    data = tmp_path / "small"
    data.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", data], check=True)
    try:
        proxy = Proxy(ferry_bin, data, hub, log=tmp_path / "serve.log")
        try:
            sha, size = sha_of(proxy, MODEL)  # 3 MiB: does not fit
            try:
                status, _, body = proxy.request(MODEL)
            except Exception:  # an aborted body
                status, body = None, b""
            assert len(body) < size
            assert sha not in blobs(data)
            assert "No space left" in proxy.log() or "RESOURCE_EXHAUSTED" in proxy.log(), proxy.log()
            # Small files still work.
            status, _, body = proxy.request("/hf/org/tiny-model/resolve/main/config.json")
            assert status == 200 and body == b'{"hidden": 16}\n'
        finally:
            proxy.stop()
    finally:
        subprocess.run(["umount", data], check=True)
