"""ferry serve's PyPI proxy (/pypi/simple/, /pypi/files/) with the real pip (Debian's 23.0.1)
against the nginx PyPI stand-in (tests/tools/pypi_standin.py), whose access log shows every
request that reached upstream. Backs docs/semantics/pypi.md and the "PyPI cache" part of
docs/semantics/serve.md. Needs no RGW: the data store is a local directory.
"""
import hashlib
import json
import os
import pathlib
import re
import subprocess

import pytest

from pypi_helpers import Upstream
from serve_helpers import ServeProcess

ROOT = pathlib.Path(__file__).resolve().parents[2]
ALPHA_10 = "ferrydemo_alpha-1.0-py3-none-any.whl"
ALPHA_20 = "ferrydemo_alpha-2.0-py3-none-any.whl"


@pytest.fixture
def upstream(tmp_path):
    u = Upstream(tmp_path / "pypi")
    yield u
    u.stop()


class Served(ServeProcess):
    """`ferry serve` with /pypi in front of the stand-in."""

    def __init__(self, ferry_bin, data, upstream_url, *extra):
        super().__init__(ferry_bin, data, "--pypi-upstream", upstream_url, *extra)
        self.index = self.url + "/pypi/simple/"


@pytest.fixture
def serve(ferry_bin, tmp_path):
    started = []

    def start(upstream_url, *extra):
        s = Served(ferry_bin, tmp_path / "data", upstream_url, *extra)
        started.append(s)
        return s
    yield start
    for s in started:
        s.stop()


def venv(path):
    """A fresh environment using Debian's pip 23.0.1 (no copy of pip: ~30 ms instead of seconds)."""
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--without-pip", "--system-site-packages",
                    path], check=True)
    return path


def pip(env_dir, index, *args):
    env = dict(os.environ, PIP_FIND_LINKS="", PIP_CONFIG_FILE="/dev/null")
    return subprocess.run([env_dir / "bin/python", "-m", "pip", "install", "--no-cache-dir",
                           "--disable-pip-version-check", "--index-url", index, *map(str, args)],
                          capture_output=True, text=True, env=env, timeout=120)


def curl(url, *args):
    """(status, headers as one lower-cased string, body bytes); status 0 when curl failed."""
    p = subprocess.run(["curl", "-s", "-D", "/dev/stderr", *map(str, args), url],
                       capture_output=True, timeout=60)
    head = p.stderr.decode(errors="replace")
    codes = re.findall(r"^HTTP/1\.1 (\d+)", head, re.M)
    status = int(codes[-1]) if codes and p.returncode == 0 else 0
    return status, head.lower(), p.stdout


def proxy_file_url(served, project, name, sha):
    return f"{served.url}/pypi/files/{project}/sha256/{sha}/{name}"


def test_pip_installs_through_the_cache_then_warm_offline_and_with_upstream_down(
        upstream, serve, tmp_path):
    served = serve(upstream.pypi)
    v1 = venv(tmp_path / "v1")
    p = pip(v1, served.index, "ferrydemo-alpha", "FerryDemo_Gamma")
    assert p.returncode == 0, p.stderr
    assert "ferrydemo-alpha-2.0" in p.stdout and "ferrydemo-beta-0.2" in p.stdout
    assert "FerryDemo_Gamma-1.0" in p.stdout
    assert "/pypi/files/ferrydemo-alpha/sha256/" in p.stdout  # downloaded through the proxy
    # PEP 592: a pin to a yanked release still installs, with pip's warning and the reason.
    p = pip(v1, served.index, "ferrydemo-alpha==1.1")
    assert p.returncode == 0 and "yanked" in p.stderr and "broken build" in p.stderr, p.stderr
    # --require-hashes against the sha256 the proxy's page publishes (upstream's, unchanged).
    _, _, body = curl(served.index + "ferrydemo-beta/", "-H",
                      "Accept: application/vnd.pypi.simple.v1+json")
    beta01 = next(f for f in json.loads(body)["files"]
                  if f["filename"].startswith("ferrydemo_beta-0.1"))
    wheel = upstream.file("ferrydemo-beta", beta01["filename"]).read_bytes()
    sha = hashlib.sha256(wheel).hexdigest()
    assert beta01["hashes"] == {"sha256": sha}
    (tmp_path / "req.txt").write_text(f"ferrydemo-beta==0.1 --hash=sha256:{sha}\n")
    p = pip(v1, served.index, "--require-hashes", "-r", tmp_path / "req.txt")
    assert p.returncode == 0, p.stderr
    cold = upstream.new_requests()
    assert any("/simple/ferrydemo-alpha/" in line for line in cold), cold

    # Warm: a second environment installs the same set; upstream sees no request at all.
    v2 = venv(tmp_path / "v2")
    for args in (["ferrydemo-alpha", "FerryDemo_Gamma"], ["ferrydemo-alpha==1.1"],
                 ["--require-hashes", "-r", tmp_path / "req.txt"]):
        p = pip(v2, served.index, *args)
        assert p.returncode == 0, p.stderr
    assert upstream.new_requests() == []
    _, _, metrics = curl(served.url + "/metrics")
    hits = re.search(rb'ferry_pypi_pages_total\{result="hit"\} (\d+)', metrics)
    assert hits and int(hits.group(1)) >= 4, metrics

    # Upstream gone: cached installs still work; an uncached file is 502/504, never 404.
    upstream.stop()
    p = pip(v2, served.index, "--force-reinstall", "ferrydemo-alpha", "FerryDemo_Gamma")
    assert p.returncode == 0, p.stderr
    page = json.loads(curl(served.index + "ferrydemo-alpha/", "-H",
                           "Accept: application/vnd.pypi.simple.v1+json")[2])
    alpha10 = next(f for f in page["files"] if f["filename"] == ALPHA_10)
    status, _, _ = curl(served.url + alpha10["url"])
    assert status in (502, 504)
    status, _, _ = curl(served.index + "never-fetched/")
    assert status in (502, 504)

    # --offline over the same data: the cached set installs, nothing else is fetched (504).
    served.stop()
    offline = serve("http://127.0.0.1:9/simple/", "--offline")
    p = pip(v2, offline.index, "--force-reinstall", "ferrydemo-alpha", "FerryDemo_Gamma")
    assert p.returncode == 0, p.stderr
    status, _, body = curl(offline.url + alpha10["url"])
    assert status == 504 and b"offline" in body
    assert curl(offline.index + "never-fetched/")[0] == 504


def test_negotiation_redirects_metadata_ranges_and_paths(upstream, serve):
    served = serve(upstream.pypi)
    # PEP 691: JSON or HTML by Accept, 406 for nothing acceptable, Vary: Accept on every answer.
    status, head, body = curl(served.index + "ferrydemo-alpha/", "-H",
                              "Accept: application/vnd.pypi.simple.v1+json")
    assert status == 200 and "content-type: application/vnd.pypi.simple.v1+json" in head
    assert "vary: accept" in head
    page = json.loads(body)
    assert "dist-info-metadata" not in body.decode()  # PEP 714: pip 23.0 would crash on it
    status, head, body = curl(served.index + "ferrydemo-alpha/")
    assert status == 200 and "content-type: text/html" in head and "vary: accept" in head
    assert b'data-yanked="broken build"' in body and b'data-requires-python="&gt;=3.8"' in body
    status, head, _ = curl(served.index + "ferrydemo-alpha/", "-H", "Accept: application/json")
    assert status == 406 and "vary: accept" in head
    for path in ("FerryDemo_Gamma/", "ferrydemo-gamma"):
        status, head, _ = curl(served.index + path)
        assert status == 301 and "location: /pypi/simple/ferrydemo-gamma/" in head, head
        assert "vary: accept" in head
    assert curl(served.index + "-not-a-name-/")[0] == 404
    assert curl(served.index + "no-such-project/")[0] == 404  # upstream's own answer
    status, _, body = curl(served.index, "-H", "Accept: application/vnd.pypi.simple.v1+json")
    assert status == 200 and {"name": "FerryDemo_Gamma"} in json.loads(body)["projects"]

    # PEP 658 metadata: the upstream bytes, checked against the core-metadata hash.
    alpha20 = next(f for f in page["files"] if f["filename"] == ALPHA_20)
    status, _, body = curl(served.url + alpha20["url"] + ".metadata")
    metadata = upstream.file("ferrydemo-alpha", ALPHA_20 + ".metadata").read_bytes()
    assert status == 200 and body == metadata
    assert hashlib.sha256(body).hexdigest() == alpha20["core-metadata"]["sha256"]

    # The zip directory at an uncached wheel's tail: 206 with the right bytes.
    alpha10 = next(f for f in page["files"] if f["filename"] == ALPHA_10)
    wheel = upstream.file("ferrydemo-alpha", ALPHA_10).read_bytes()
    status, head, body = curl(served.url + alpha10["url"], "-H", "Range: bytes=-100")
    assert status == 206 and body == wheel[-100:], head
    assert f"content-range: bytes {len(wheel) - 100}-{len(wheel) - 1}/{len(wheel)}" in head
    status, head, _ = curl(served.url + alpha10["url"], "-I")
    assert status == 200 and f"content-length: {len(wheel)}" in head

    # Paths that try to leave /pypi/files/ or name an unlisted file.
    sha = alpha10["hashes"]["sha256"]
    for path, code in (("/pypi/files/../pypi/simple/", 400),  # the server's path check
                       ("/pypi/files/ferrydemo-alpha/%2e%2e/%2e%2e/etc/passwd", 400),
                       (f"/pypi/files/ferrydemo-alpha%2fsha256/{sha}/{ALPHA_10}", 400),
                       (f"/pypi/files/ferrydemo-alpha/sha256/{sha}/..%2f..%2fetc%2fpasswd", 400),
                       (f"/pypi/files/ferrydemo-alpha/sha256/{sha}/other-1.0-py3-none-any.whl",
                        404),
                       (f"/pypi/files/ferrydemo-alpha/sha256/{'0' * 64}/{ALPHA_10}", 404),
                       (f"/pypi/files/Ferrydemo-Alpha/sha256/{sha}/{ALPHA_10}", 404),
                       (f"/pypi/files/ferrydemo-alpha/nohash/{ALPHA_10}", 404)):
        status, _, _ = curl(served.url + path, "--path-as-is")
        assert status == code, (path, status)


def test_corrupt_upstream_file_is_refused_and_never_published(upstream, serve, tmp_path):
    served = serve(upstream.pypi)
    path = upstream.file("ferrydemo-beta", "ferrydemo_beta-0.2-py3-none-any.whl")
    good = path.read_bytes()
    sha = hashlib.sha256(good).hexdigest()
    url = proxy_file_url(served, "ferrydemo-beta", path.name, sha)
    blob = tmp_path / "data/cache/blobs/sha256" / sha[:2] / sha
    # Upstream now serves other bytes (same size) than the page's #sha256 says.
    path.write_bytes(bytes(b ^ 0x55 for b in good))
    status, _, body = curl(url)
    assert status == 502 and body != good and not blob.exists()
    v = venv(tmp_path / "v")
    p = pip(v, served.index, "--retries", "0", "ferrydemo-beta==0.2")
    assert p.returncode != 0 and not blob.exists()
    # Upstream repaired: the next request fills the cache.
    path.write_bytes(good)
    status, _, body = curl(url)
    assert status == 200 and body == good and blob.exists()
    p = pip(v, served.index, "ferrydemo-beta==0.2")
    assert p.returncode == 0, p.stderr


def test_prewarm_from_requirements_then_pip_needs_no_upstream(upstream, serve, ferry_bin, tmp_path):
    served = serve(upstream.pypi)
    req = tmp_path / "requirements.txt"
    req.write_text("# pinned, as pip freeze writes it\nferrydemo-alpha==2.0\n"
                   "ferrydemo_beta==0.2 \\\n    --hash=sha256:0000\nFerryDemo_Gamma\n-r other.txt\n")
    p = subprocess.run([ferry_bin, "serve", "prewarm", "--server", served.url, "-r", req],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    # Each version's wheel and its PEP 658 metadata file; the -r line is reported, not followed.
    assert "prewarmed 6 files" in p.stdout, p.stdout + p.stderr
    assert "other.txt" in p.stderr and "skipped" in p.stderr
    upstream.new_requests()
    p = pip(venv(tmp_path / "v"), served.index, "ferrydemo-alpha==2.0", "FerryDemo_Gamma")
    assert p.returncode == 0, p.stderr
    assert upstream.new_requests() == [], "pip after prewarm reached upstream"
    missing = tmp_path / "missing.txt"
    missing.write_text("ferrydemo-alpha==9.9\n")
    p = subprocess.run([ferry_bin, "serve", "prewarm", "--server", served.url, "-r", missing],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 1 and "ferrydemo-alpha==9.9 (line 1)" in p.stderr, p.stderr


def test_pip_authenticates_with_the_token_in_the_index_url(upstream, ferry_bin, tmp_path):
    """pip sends no bearer token: behind tokens it said `from versions: none` and showed the 401
    only with -vv. It sends HTTP Basic from the index URL's userinfo or ~/.netrc, as with devpi,
    Artifactory and Nexus; the server takes the token as the password (or as the user name
    alone), answers 401 with a Basic challenge without one, and never logs it."""
    (tmp_path / "rw").write_text("pip-writer-7f3a1c\n")
    (tmp_path / "ro").write_text("pip-reader-2b9e4d\n")
    served = Served(ferry_bin, tmp_path / "data", upstream.pypi, "--token-file", tmp_path / "rw",
                    "--read-token-file", tmp_path / "ro")
    try:
        host = served.url.removeprefix("http://")
        status, head, _ = curl(served.index)
        assert status == 401 and 'www-authenticate: basic realm="ferry"' in head, head
        v = venv(tmp_path / "v")
        p = pip(v, served.index, "--no-input", "ferrydemo-beta")
        assert p.returncode != 0
        # As the guide writes it: the read token as the password, the plain-HTTP host trusted.
        index = f"http://lab:pip-reader-2b9e4d@{host}/pypi/simple/"
        p = pip(v, index, "--trusted-host", "127.0.0.1", "ferrydemo-beta==0.1")
        assert p.returncode == 0, p.stdout + p.stderr
        assert "ferrydemo-beta-0.1" in p.stdout
        # The token as the user name alone (http://TOKEN@host/).
        p = pip(v, f"http://pip-writer-7f3a1c@{host}/pypi/simple/", "--trusted-host", "127.0.0.1",
                "ferrydemo-beta==0.2")
        assert p.returncode == 0, p.stdout + p.stderr
        # ~/.netrc with the plain index URL.
        home = tmp_path / "home"
        home.mkdir()
        (home / ".netrc").write_text("machine 127.0.0.1 login lab password pip-reader-2b9e4d\n")
        (home / ".netrc").chmod(0o600)
        env = dict(os.environ, HOME=str(home), PIP_FIND_LINKS="", PIP_CONFIG_FILE="/dev/null")
        p = subprocess.run([v / "bin/python", "-m", "pip", "install", "--no-cache-dir",
                            "--disable-pip-version-check", "--index-url", served.index,
                            "--force-reinstall", "--no-deps", "ferrydemo-beta==0.1"],
                           capture_output=True, text=True, env=env, timeout=120)
        assert p.returncode == 0, p.stdout + p.stderr
        assert "pip-reader" not in served.log() and "pip-writer" not in served.log()
    finally:
        served.stop()
