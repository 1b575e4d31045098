"""ferry serve: start, /healthz and /metrics over a real socket, usage errors, SIGTERM.

Needs no RGW: the data store is a local directory. Backs docs/semantics/serve.md.
"""
import os
import re
import signal
import subprocess
import time
import urllib.error
import urllib.request

import pytest


def _env():
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/root")}


class Served:
    def __init__(self, ferry_bin, *args):
        self.proc = subprocess.Popen([ferry_bin, *map(str, args)], env=_env(),
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        line = self.proc.stderr.readline().decode()
        m = re.search(r"listening on (http://127\.0\.0\.1:\d+)", line)
        if not m:
            self.proc.kill()
            raise AssertionError(f"no listening line: {line!r} {self.proc.stderr.read()!r}")
        self.url = m.group(1)

    def get(self, path, headers=None, method="GET"):
        req = urllib.request.Request(self.url + path, headers=headers or {}, method=method)
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                return r.status, dict(r.headers), r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), e.read().decode()

    def stop(self, sig=signal.SIGTERM):
        self.proc.send_signal(sig)
        start = time.monotonic()
        rc = self.proc.wait(timeout=15)
        return rc, time.monotonic() - start


@pytest.fixture
def served(ferry_bin, tmp_path):
    s = Served(ferry_bin, "serve", "--data", tmp_path, "--listen", "127.0.0.1:0")
    yield s
    if s.proc.poll() is None:
        s.proc.kill()
        s.proc.wait()


def test_healthz_metrics_and_errors(served):
    status, _, body = served.get("/healthz")
    assert (status, body) == (200, "ok\n")
    status, headers, body = served.get("/metrics")
    assert status == 200
    assert headers["Content-Type"].startswith("text/plain; version=0.0.4")
    assert "# TYPE ferry_http_requests_total counter" in body
    assert 'ferry_http_requests_total{code="200"}' in body
    status, headers, body = served.get("/nope")
    assert status == 404 and body == '{"error":"no route for /nope"}\n'
    status, _, body = served.get("/healthz", method="POST")
    assert status == 405
    status, headers, body = served.get("/healthz", method="HEAD")
    assert status == 200 and headers["Content-Length"] == "3" and body == ""


def test_traversal_is_400(served):
    for target in ["/a/%2e%2e/b", "/a/..%2fb", "/a%5cb"]:
        status, _, body = served.get(target)
        assert status == 400, target
        assert body.startswith('{"error":')


def test_sigterm_and_sigint_exit_0_promptly(ferry_bin, tmp_path):
    for sig in (signal.SIGTERM, signal.SIGINT):
        s = Served(ferry_bin, "serve", "--data", tmp_path, "--listen", "127.0.0.1:0")
        assert s.get("/healthz")[0] == 200
        rc, took = s.stop(sig)
        assert rc == 0
        assert took < 5


def test_token_file(ferry_bin, tmp_path):
    tokens = tmp_path / "tokens"
    tokens.write_text("# clients\nsecret-token-1\n\n")
    s = Served(ferry_bin, "serve", "--data", tmp_path, "--listen", "127.0.0.1:0",
               "--token-file", tokens)
    try:
        status, headers, body = s.get("/metrics")
        assert status == 401 and headers["WWW-Authenticate"].startswith("Bearer")
        assert s.get("/metrics", {"Authorization": "Bearer secret-token-1"})[0] == 200
        assert s.get("/healthz")[0] == 200
    finally:
        rc, _ = s.stop()
    assert rc == 0
    assert b"secret-token-1" not in s.proc.stderr.read()


@pytest.mark.parametrize("args,message", [
    (["--listen", "nonsense"], "is not HOST:PORT"),
    (["--listen", "127.0.0.1:99999"], "is not HOST:PORT"),
    (["--listen", "0.0.0.0:0"], "--allow-remote"),
    (["--threads", "0"], "--threads"),
    (["--token-file", "/nonexistent/tokens"], "--token-file"),
    (["--bogus"], "usage error"),
    # Issue 28's flags, mistyped or without what they need.
    (["--token-file", "TOKENS", "--anonymous-read", "hf,tracker"], "'tracker' is not an area"),
    (["--anonymous-read", "hf"], "--anonymous-read needs --token-file"),
    (["--allowed-host", "nas.lan:8780"], "--allowed-host 'nas.lan:8780' is not a host name"),
    (["--upstream-allow", "http://cdn.lab/"], "--upstream-allow 'http://cdn.lab/' is not HOST"),
    (["--hf-token-file", "/nonexistent/hf"], "--hf-token-file"),
    (["--listen", "0.0.0.0:0", "--allow-remote"], "without tokens"),
    (["--metadata-ttl", "-1"], "--metadata-ttl"),
    (["--stall-timeout", "0"], "--stall-timeout"),
    (["--max-cache-size", "lots"], "--max-cache-size"),
])
def test_bad_flags_are_one_line_usage_errors(ferry_bin, tmp_path, args, message):
    (tmp_path / "tokens").write_text("a-token\n")
    args = [str(tmp_path / "tokens") if a == "TOKENS" else a for a in args]
    data = tmp_path / "data"
    p = subprocess.run([ferry_bin, "serve", "--data", str(data), *args], env=_env(),
                       capture_output=True, timeout=30)
    assert p.returncode == 2
    err = p.stderr.decode()
    assert err.count("\n") == 1 and message in err, err
    # A refused start creates nothing: no --data directory, no spool, no tracker database.
    assert not data.exists(), sorted(str(f) for f in data.rglob("*"))


def test_data_is_required(ferry_bin):
    p = subprocess.run([ferry_bin, "serve"], env=_env(), capture_output=True, timeout=30)
    assert p.returncode == 2 and "--data" in p.stderr.decode()
