"""The local upstream stand-ins the proxy tests use (tests/tools/hf_standin.py) behave like the
services they replace, checked with the real clients: npm @huggingface/hub downloads files and
snapshots from the Hub stand-in exactly as it would from huggingface.co (docs/semantics/hf.md)."""
import hashlib
import json
import os
import pathlib
import subprocess
import sys

import pytest

from conftest import wait_for
from pypi_helpers import Upstream

ROOT = pathlib.Path(__file__).resolve().parents[2]
NPM = ROOT / "tests/tools/npm"
pytestmark = pytest.mark.skipif(not (NPM / "node_modules/@huggingface/hub").exists(),
                                reason="npm clients missing: scripts/install-deps.sh installs them")


@pytest.fixture
def hub(tmp_path):
    log = tmp_path / "hub.log"
    proc = subprocess.Popen([sys.executable, ROOT / "tests/tools/hf_standin.py",
                             "--port-file", tmp_path / "hub.port", "--cdn-port-file",
                             tmp_path / "cdn.port", "--log", log, "--lifetime", "120"])
    port = wait_for(lambda: (tmp_path / "hub.port").exists() and (tmp_path / "hub.port").read_text(),
                    "the hub stand-in's port")
    yield f"http://127.0.0.1:{port}", log
    proc.kill()
    proc.wait()


def client(*args, xet=True):
    return subprocess.run(["node", NPM / "hf_client.mjs", *map(str, args)], capture_output=True,
                          text=True, timeout=120, env=dict(os.environ, HF_CLIENT_XET="1" if xet else "0"))


def test_npm_client_downloads_files_and_snapshots_from_the_hub_standin(hub, tmp_path):
    url, log = hub
    # The stand-in advertises Xet as the Hub does: the client's Xet switch (on by default) takes
    # it to xet-read-token and then the CAS, which the stand-in has not got.
    p = client("snapshot", url, "org/tiny-model", "main", tmp_path / "xet")
    assert p.returncode == 1
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    assert any("/xet-read-token/" in e["path"] for e in entries)
    assert any(e["server"] == "cas" and "/reconstructions/" in e["path"] for e in entries)
    p = client("snapshot", url, "org/tiny-model", "main", tmp_path / "c", xet=False)
    assert p.returncode == 0, p.stderr
    snap = pathlib.Path(json.loads(p.stdout.splitlines()[-1])["dir"])
    names = sorted(str(f.relative_to(snap)) for f in snap.rglob("*") if f.is_file())
    assert names == ["README.md", "config.json", "model.safetensors", "nested/shard-00001.bin",
                     "nested/vocab.txt", "xet.safetensors"]
    # Blobs are named by the LFS sha256 or the git blob sha1, as on the Hub.
    model = (snap / "model.safetensors").read_bytes()
    assert (snap.parent.parent / "blobs" / hashlib.sha256(model).hexdigest()).exists()
    config = (snap / "config.json").read_bytes()
    sha1 = hashlib.sha1(b"blob %d\0" % len(config) + config).hexdigest()
    assert (snap.parent.parent / "blobs" / sha1).exists()
    # A tag resolves to its own commit; datasets have their own prefix.
    p = client("file", url, "org/tiny-model", "v1.0", "README.md", tmp_path / "c", xet=False)
    assert p.returncode == 0 and pathlib.Path(json.loads(p.stdout.splitlines()[-1])["path"]).read_bytes() == b"# tiny v1\n"
    p = client("file", url, "datasets/org/tiny-dataset", "main", "data/train-00000.parquet", tmp_path / "c",
               xet=False)
    assert p.returncode == 0 and json.loads(p.stdout.splitlines()[-1])["size"] == 250000
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    assert any(e["server"] == "cdn" for e in entries), "LFS files come from the CDN"


def test_gated_repo_and_errors(hub, tmp_path):
    url, _ = hub
    p = client("file", url, "org/gated-model", "main", "config.json", tmp_path / "c")
    assert p.returncode == 1 and "restricted" in p.stderr
    p = client("file", url, "org/gated-model", "main", "config.json", tmp_path / "c", "hf_granted")
    assert p.returncode == 0, p.stderr
    for path, code, kind in (("org/nope/resolve/main/x", 401, "RepoNotFound"),
                             ("org/tiny-model/resolve/nobranch/x", 404, "RevisionNotFound"),
                             ("org/tiny-model/resolve/main/missing.bin", 404, "EntryNotFound")):
        h = subprocess.run(["curl", "-sI", f"{url}/{path}"], capture_output=True, text=True).stdout
        assert h.startswith(f"HTTP/1.1 {code}") and f"X-Error-Code: {kind}" in h, h


def test_cdn_faults_and_signed_urls(hub, tmp_path):
    url, _ = hub
    head = subprocess.run(["curl", "-sI", f"{url}/org/tiny-model/resolve/main/model.safetensors"],
                          capture_output=True, text=True).stdout
    location = next(l.split(": ", 1)[1].strip() for l in head.splitlines() if l.startswith("Location"))
    assert "Signature=" in location and "X-Linked-Size: 3145728" in head
    tampered = location.replace("Signature=", "Signature=0")
    assert subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", tampered],
                          capture_output=True, text=True).stdout == "403"
    subprocess.run(["curl", "-s", "-X", "POST", "-d", '{"cdn": "truncate", "times": 1}',
                    f"{url}/__control"], check=True, capture_output=True)
    got = subprocess.run(["curl", "-s", location], capture_output=True).stdout
    assert len(got) == 3145728 // 2  # cut short
    got = subprocess.run(["curl", "-s", location], capture_output=True).stdout
    assert hashlib.sha256(got).hexdigest() in location  # the next one is whole


@pytest.fixture
def pypi(tmp_path):
    u = Upstream(tmp_path / "pypi")
    yield u
    u.stop()


def pip(venv, *args):
    env = dict(os.environ, PIP_FIND_LINKS="", PIP_NO_CACHE_DIR="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    return subprocess.run([venv / "bin/pip", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=300)


def test_pip_installs_from_the_pytorch_style_index(pypi, tmp_path):
    """The /whl/cu124/ index as pip sees download.pytorch.org: a local-version wheel from it, its
    dependency from the PyPI stand-in, and the wheel with the wrong bytes refused by its hash."""
    url, torch = pypi.pypi, pypi.torch
    venv = tmp_path / "venv"
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--without-pip", "--system-site-packages", venv],
                   check=True)
    args = ["-m", "pip", "install", "--no-cache-dir", "--disable-pip-version-check", "--index-url",
            torch, "--extra-index-url", url]
    p = subprocess.run([venv / "bin/python", *args, "ferrytorch==2.5.0+cu124"], capture_output=True,
                       text=True, timeout=120, env=dict(os.environ, PIP_CONFIG_FILE="/dev/null"))
    assert p.returncode == 0 and "ferrytorch-2.5.0+cu124" in p.stdout, p.stderr
    assert "ferrydemo-beta-0.2" in p.stdout
    p = subprocess.run([venv / "bin/python", *args, "ferrytorch==2.4.0+cu124"], capture_output=True,
                       text=True, timeout=120, env=dict(os.environ, PIP_CONFIG_FILE="/dev/null"))
    assert p.returncode != 0 and "DO NOT MATCH THE HASHES" in p.stderr, p.stderr


def test_pip_installs_from_the_pypi_standin(pypi, tmp_path):
    url, d = pypi.pypi, pypi.dir
    venv = tmp_path / "venv"
    subprocess.run(["/usr/bin/python3", "-m", "venv", venv], check=True)
    p = pip(venv, "install", "--index-url", url, "ferrydemo-alpha", "FerryDemo.Gamma")
    assert p.returncode == 0, p.stderr
    assert "ferrydemo-alpha-2.0" in p.stdout and "ferrydemo-beta-0.2" in p.stdout
    p = pip(venv, "install", "--index-url", url, "ferrydemo-alpha==1.1")
    assert p.returncode == 0 and "yanked" in p.stderr and "broken build" in p.stderr, p.stderr
    # --require-hashes against the sha256 the pages publish.
    page = json.loads(subprocess.run(["curl", "-s", "-H", "Accept: application/vnd.pypi.simple.v1+json",
                                      url + "ferrydemo-beta/"], capture_output=True).stdout)
    wheel = next(f for f in page["files"] if f["filename"].startswith("ferrydemo_beta-0.1"))
    assert "dist-info-metadata" not in wheel and wheel["core-metadata"]["sha256"]  # PEP 714
    (tmp_path / "req.txt").write_text(f"ferrydemo-beta==0.1 --hash=sha256:{wheel['hashes']['sha256']}\n")
    p = pip(venv, "install", "--index-url", url, "--require-hashes", "-r", tmp_path / "req.txt")
    assert p.returncode == 0, p.stderr
    (tmp_path / "bad.txt").write_text("ferrydemo-beta==0.1 --hash=sha256:" + "0" * 64 + "\n")
    p = pip(venv, "install", "--force-reinstall", "--index-url", url, "--require-hashes", "-r", tmp_path / "bad.txt")
    assert p.returncode != 0 and "THESE PACKAGES DO NOT MATCH THE HASHES" in p.stderr
    # HTML by default and for text/html, with Vary: Accept; .metadata files are served.
    h = subprocess.run(["curl", "-s", "-D", "-", "-o", "/dev/null", url + "ferrydemo-alpha/"],
                       capture_output=True, text=True).stdout
    assert "Content-Type: text/html" in h and "Vary: Accept" in h
    html = subprocess.run(["curl", "-s", url + "ferrydemo-alpha/"], capture_output=True, text=True).stdout
    assert 'data-requires-python="&gt;=3.8"' in html and 'data-yanked="broken build"' in html
    assert "data-dist-info-metadata=" in html and "data-core-metadata=" in html
    base = url.rsplit("/simple/", 1)[0]
    meta = subprocess.run(["curl", "-s", f"{base}/files/ferrydemo-alpha/ferrydemo_alpha-2.0-py3-none-any.whl.metadata"],
                          capture_output=True).stdout
    assert b"Requires-Dist: ferrydemo-beta>=0.2" in meta
    assert "GET /files/ferrydemo-alpha/" in (d / "access.log").read_text()
