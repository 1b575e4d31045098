"""The local upstream stand-ins the proxy tests use (tests/tools/hf_standin.py) behave like the
services they replace, checked with the real clients: npm @huggingface/hub downloads files and
snapshots from the Hub stand-in exactly as it would from huggingface.co (docs/semantics/hf.md)."""
import hashlib
import json
import os
import pathlib
import subprocess
import sys
import time

import pytest

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
    for _ in range(100):
        if (tmp_path / "hub.port").exists() and (tmp_path / "hub.port").read_text():
            break
        time.sleep(0.05)
    yield f"http://127.0.0.1:{(tmp_path / 'hub.port').read_text()}", log
    proc.kill()
    proc.wait()


def client(*args):
    p = subprocess.run(["node", NPM / "hf_client.mjs", *map(str, args)], capture_output=True,
                       text=True, timeout=120)
    return p


def test_npm_client_downloads_files_and_snapshots_from_the_hub_standin(hub, tmp_path):
    url, log = hub
    p = client("snapshot", url, "org/tiny-model", "main", tmp_path / "c")
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
    p = client("file", url, "org/tiny-model", "v1.0", "README.md", tmp_path / "c")
    assert p.returncode == 0 and pathlib.Path(json.loads(p.stdout.splitlines()[-1])["path"]).read_bytes() == b"# tiny v1\n"
    p = client("file", url, "datasets/org/tiny-dataset", "main", "data/train-00000.parquet", tmp_path / "c")
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
