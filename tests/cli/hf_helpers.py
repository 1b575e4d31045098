"""Processes the /hf proxy tests start: the Hub stand-in (tests/tools/hf_standin.py) and
`ferry serve` in front of it, with logs in files (a pipe left unread would block a server)."""
import json
import os
import pathlib
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

from serve_helpers import ServeProcess, wait_for

ROOT = pathlib.Path(__file__).resolve().parents[2]
NPM = ROOT / "tests/tools/npm"


class Hub:
    """The Hub + CDN stand-in; `log()` is every request it received, in order. `host`: the
    address it listens on and puts in its URLs (one a container reaches, for test_container)."""

    def __init__(self, tmp, lfs_size=3 << 20, host="127.0.0.1"):
        self.dir = pathlib.Path(tmp)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.log_path = self.dir / "hub.log"
        self.proc = subprocess.Popen(
            [sys.executable, ROOT / "tests/tools/hf_standin.py", "--port-file", self.dir / "hub.port",
             "--cdn-port-file", self.dir / "cdn.port", "--log", self.log_path,
             "--lfs-size", str(lfs_size), "--lifetime", "900", "--host", host])
        port = wait_for(lambda: (self.dir / "hub.port").exists() and (self.dir / "hub.port").read_text(),
                        "the hub stand-in")
        self.url = f"http://{host}:{port}"
        cdn = wait_for(lambda: (self.dir / "cdn.port").exists() and (self.dir / "cdn.port").read_text(),
                       "the CDN stand-in")
        # The Hub's redirects go to its CDN, another origin: `ferry serve --upstream-allow` it, as
        # the public Hub's CDNs are allowed by default (docs/semantics/serve.md, "Upstreams").
        self.cdn = f"{host}:{cdn}"

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


class Proxy(ServeProcess):
    """`ferry serve` with /hf in front of a hub (a Hub, whose CDN it may follow redirects to)."""

    def __init__(self, ferry_bin, data, hub, *extra, env=None, log=None):
        super().__init__(ferry_bin, data, "--hf-upstream", hub.url, "--upstream-allow", hub.cdn,
                         *extra, env=env, log=log)
        self.hf = self.url + "/hf"

    def request(self, path, method="GET", headers=None, data=None):
        req = urllib.request.Request(self.url + path, method=method, headers=headers or {}, data=data)
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                return r.status, r.headers, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.headers, e.read()



def npm_client(*args, timeout=180, xet=True):
    """The npm client; xet=False turns its Xet switch off (needed to download from the stand-in
    directly: it has no CAS)."""
    env = dict(os.environ, HF_CLIENT_XET="1" if xet else "0")
    return subprocess.run(["node", NPM / "hf_client.mjs", *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, env=env)


def replay(*args, timeout=180, env=None):
    return subprocess.run([sys.executable, ROOT / "tests/tools/hf_hub_replay.py", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, **(env or {})))


def xet_requests(log):
    """The requests of a stand-in's log that a Xet client makes: a token, or anything at the CAS."""
    return [e for e in log if e["server"] == "cas" or "/xet-" in e["path"]]


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
