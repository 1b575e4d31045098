"""Processes the /hf proxy tests start: the Hub stand-in (tests/tools/hf_standin.py) and
`ferry serve` in front of it, with logs in files (a pipe left unread would block a server)."""
import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
NPM = ROOT / "tests/tools/npm"


def _wait_for(predicate, what, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


class Hub:
    """The Hub + CDN stand-in; `log()` is every request it received, in order."""

    def __init__(self, tmp, lfs_size=3 << 20):
        self.dir = pathlib.Path(tmp)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.log_path = self.dir / "hub.log"
        self.proc = subprocess.Popen(
            [sys.executable, ROOT / "tests/tools/hf_standin.py", "--port-file", self.dir / "hub.port",
             "--cdn-port-file", self.dir / "cdn.port", "--log", self.log_path,
             "--lfs-size", str(lfs_size), "--lifetime", "900"])
        port = _wait_for(lambda: (self.dir / "hub.port").exists() and (self.dir / "hub.port").read_text(),
                         "the hub stand-in")
        self.url = f"http://127.0.0.1:{port}"

    def log(self):
        if not self.log_path.exists():
            return []
        return [json.loads(line) for line in self.log_path.read_text().splitlines() if line]

    def fault(self, kind, times):
        req = urllib.request.Request(self.url + "/__control", method="POST",
                                     data=json.dumps({"cdn": kind, "times": times}).encode())
        urllib.request.urlopen(req, timeout=10).read()

    def stop(self):
        self.proc.kill()
        self.proc.wait()


class Proxy:
    """`ferry serve` with /hf in front of a hub; stderr goes to a file."""

    def __init__(self, ferry_bin, data, hub_url, *extra, env=None, log=None):
        self.data = data if str(data).startswith("s3://") else pathlib.Path(data)
        self.err = pathlib.Path(log) if log else self.data.with_name(self.data.name + ".serve.log")
        env = env or {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                      "HOME": os.environ.get("HOME", "/root")}
        self.proc = subprocess.Popen(
            [ferry_bin, "serve", "--data", self.data, "--listen", "127.0.0.1:0",
             "--hf-upstream", hub_url, *map(str, extra)],
            env=env, stdout=subprocess.DEVNULL, stderr=open(self.err, "w"))
        m = _wait_for(lambda: re.search(r"listening on (http://127\.0\.0\.1:\d+)", self.log()),
                      f"ferry serve to listen ({self.err})")
        self.url = m.group(1)
        self.hf = self.url + "/hf"

    def log(self):
        return self.err.read_text() if self.err.exists() else ""

    def request(self, path, method="GET", headers=None, data=None):
        req = urllib.request.Request(self.url + path, method=method, headers=headers or {}, data=data)
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                return r.status, r.headers, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.headers, e.read()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=20)


def npm_client(*args, timeout=180):
    return subprocess.run(["node", NPM / "hf_client.mjs", *map(str, args)], capture_output=True,
                          text=True, timeout=timeout)


def replay(*args, timeout=180):
    return subprocess.run([sys.executable, ROOT / "tests/tools/hf_hub_replay.py", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout)


def blobs(data_dir):
    """Published blobs of a proxy's data dir: {hex: size}."""
    root = pathlib.Path(data_dir) / "cache/blobs"
    return {p.name: p.stat().st_size for p in root.rglob("*") if p.is_file()} if root.exists() else {}


@pytest.fixture
def hub(tmp_path):
    """The stand-in, stopped after the test (import it into a test module to use it)."""
    h = Hub(tmp_path / "hub")
    yield h
    h.stop()


def needs_npm():
    """pytestmark for modules driving the npm client."""
    return pytest.mark.skipif(not (NPM / "node_modules/@huggingface/hub").exists(),
                              reason="npm clients missing: scripts/install-deps.sh installs them")
