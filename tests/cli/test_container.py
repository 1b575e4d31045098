"""`ferry serve` as NAS users run it (issue 32): the image of deploy/Containerfile, packed from
the binary under test by scripts/container-image.sh (the Debian 12 base from debootstrap,
cached), started from deploy/compose.yaml by Debian's podman-compose with port publishing, and
used from the host by real clients: pip through /pypi, the npm @huggingface/hub client through
/hf, MLflow's REST calls with a 256 MiB artifact. `down` and `up` keep everything; `podman stop`
(SIGTERM) during an upload finishes it or leaves nothing; the container runs as non-root and
writes only under /data. The stand-in upstreams listen on an address of this host that
containers reach (they cannot reach the host's loopback)."""
import hashlib
import http.client
import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request

import pytest

from conftest import wait_for
from hf_helpers import Hub, npm_client, needs_npm, xet_requests
from pypi_helpers import Upstream

ROOT = pathlib.Path(__file__).resolve().parents[2]
TOKEN = "hf_containertoken0123456789"
IMAGE = "localhost/ferry:test"
PG_IMAGE = "localhost/postgres-standin:15"

pytestmark = [
    pytest.mark.skipif(not shutil.which("podman") or not shutil.which("podman-compose"),
                       reason="podman and podman-compose: scripts/install-deps.sh installs them"),
    needs_npm(),
]


def host_address():
    """This host's address on its default route: containers reach the host there."""
    out = subprocess.run(["ip", "-4", "route", "get", "192.0.2.200"], capture_output=True,
                         text=True).stdout.split()
    return out[out.index("src") + 1] if "src" in out else socket.gethostbyname(socket.gethostname())


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(*args, check=True, timeout=600, env=None):
    p = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=timeout,
                       env=dict(os.environ, **(env or {})))
    if check:
        assert p.returncode == 0, f"{args}: {p.stdout[-2000:]} {p.stderr[-2000:]}"
    return p


@pytest.fixture(scope="module")
def image(ferry_bin):
    """The image with the ferry under test (a sanitizer build brings its runtimes along)."""
    ldd = run("ldd", ferry_bin).stdout
    extra = "libasan8 libubsan1" if "libasan" in ldd else ""
    run("bash", ROOT / "scripts/container-image.sh", "pack", ferry_bin,
        env={"FERRY_IMAGE": IMAGE, "FERRY_IMAGE_PACKAGES": extra})
    run("podman", "build", "--quiet", "--format", "docker", "-t", PG_IMAGE,
        ROOT / "tests/tools/postgres-image")
    return IMAGE


@pytest.fixture(scope="module")
def upstreams(tmp_path_factory):
    addr = host_address()
    d = tmp_path_factory.mktemp("upstreams")
    os.environ["PYPI_STANDIN_HOST"] = addr
    try:
        pypi = Upstream(d / "pypi")
    finally:
        del os.environ["PYPI_STANDIN_HOST"]
    hub = Hub(d / "hub", host=addr)
    yield pypi, hub
    hub.stop()
    pypi.stop()


class Deployment:
    """deploy/compose.yaml (and compose.postgres.yaml) copied into a directory with the .env and
    secrets a user writes, driven by podman-compose."""

    def __init__(self, d, upstreams, postgres=False):
        self.dir = pathlib.Path(d)
        self.name = self.dir.name.replace("_", "").lower()
        pypi, hub = upstreams
        self.files = ["compose.yaml"] + (["compose.postgres.yaml"] if postgres else [])
        for f in self.files:
            shutil.copy(ROOT / "deploy" / f, self.dir / f)
        # Test only: the sanitizer build's options (leak checks need ptrace, which containers lack).
        (self.dir / "compose.test.yaml").write_text(
            "services:\n  ferry:\n    environment:\n      ASAN_OPTIONS: detect_leaks=0\n")
        self.files.append("compose.test.yaml")
        self.data = self.dir / "data"
        self.data.mkdir()
        os.chown(self.data, 8780, 8780)
        secrets = self.dir / "secrets"
        secrets.mkdir()
        for name, text in [("tokens", TOKEN + "\n"), ("read-tokens", ""),
                           ("pg-password", "s3cret-pg-pass\n")]:
            (secrets / name).write_text(text)
            os.chown(secrets / name, 8780 if name != "pg-password" else 0, 8780)
            os.chmod(secrets / name, 0o444 if name == "pg-password" else 0o400)
        self.port = free_port()
        (self.dir / ".env").write_text("\n".join([
            f"FERRY_IMAGE={IMAGE}", f"FERRY_POSTGRES_IMAGE={PG_IMAGE}",
            f"FERRY_DATA_PATH={self.data}", "FERRY_BIND=127.0.0.1", f"FERRY_PORT={self.port}",
            f"FERRY_PYPI_UPSTREAMS={pypi.pypi}", f"FERRY_HF_UPSTREAM={hub.url}",
            f"FERRY_UPSTREAM_ALLOW={hub.cdn}", "FERRY_MAX_CACHE_SIZE=10G", ""]))
        self.url = f"http://127.0.0.1:{self.port}"

    def compose(self, *args, check=True):
        files = [a for f in self.files for a in ("-f", self.dir / f)]
        return run("podman-compose", "-p", self.name, *files, *args, check=check)

    @property
    def container(self):
        return f"{self.name}_ferry_1"

    def up(self):
        self.compose("up", "-d")
        wait_for(lambda: self.get("/healthz")[0] == 200, "ferry serve in its container", 120)
        # The image's own health check (ferry probing itself inside the container) agrees.
        assert run("podman", "healthcheck", "run", self.container, check=False).returncode == 0

    def down(self):
        self.compose("down")

    def request(self, path, method="GET", body=None, headers=None):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        try:
            c.request(method, path, body=body,
                      headers=dict({"Authorization": f"Bearer {TOKEN}"}, **(headers or {})))
            r = c.getresponse()
            return r.status, r.read()
        finally:
            c.close()

    def get(self, path):
        try:
            return self.request(path)
        except OSError:
            return 0, b""

    def mlflow(self, endpoint, body):
        status, raw = self.request("/api/2.0/mlflow/" + endpoint, "POST", json.dumps(body),
                                   {"Content-Type": "application/json"})
        assert status == 200, (endpoint, raw)
        return json.loads(raw)


def pip_install(tmp, index, *reqs):
    env_dir = tmp / f"venv{len(list(tmp.glob('venv*')))}"
    run("/usr/bin/python3", "-m", "venv", "--without-pip", "--system-site-packages", env_dir)
    return run(env_dir / "bin/python", "-m", "pip", "install", "--no-cache-dir",
               "--disable-pip-version-check", "--index-url", index, *reqs, timeout=300)


def put_artifact(dep, path, size, pause_after=None, pause=None):
    """PUT `size` pseudo-random bytes as an artifact, streamed in 4 MiB pieces; after
    `pause_after` bytes it calls pause() (e.g. to stop the container mid-upload). Returns
    (status or None when the connection broke, sha256 of what was sent)."""
    h = hashlib.sha256()
    c = http.client.HTTPConnection("127.0.0.1", dep.port, timeout=120)
    c.putrequest("PUT", "/api/2.0/mlflow-artifacts/artifacts/" + path)
    c.putheader("Authorization", f"Bearer {TOKEN}")
    c.putheader("Content-Length", str(size))
    c.endheaders()
    block = hashlib.sha256(path.encode()).digest() * (4 << 20 >> 5)
    sent = 0
    try:
        while sent < size:
            piece = block[:min(len(block), size - sent)]
            c.send(piece)
            h.update(piece)
            sent += len(piece)
            if pause_after is not None and sent >= pause_after and pause:
                pause()
                pause = None
        status = c.getresponse().status
    except OSError:
        status = None
    finally:
        c.close()
    return status, h.hexdigest()


def artifact_digest(dep, path):
    status, body = dep.request("/api/2.0/mlflow-artifacts/artifacts/" + path)
    return hashlib.sha256(body).hexdigest() if status == 200 else status


def test_compose_up_serves_pip_hf_and_mlflow_and_down_up_keeps_everything(
        image, upstreams, tmp_path):
    pypi, hub = upstreams
    dep = Deployment(tmp_path, upstreams)
    try:
        dep.up()
        # pip through the cache, the token as the index URL's password.
        index = f"http://lab:{TOKEN}@127.0.0.1:{dep.port}/pypi/simple/"
        pypi.new_requests()
        pip_install(tmp_path, index, "ferrydemo-alpha", "FerryDemo_Gamma")
        assert [r for r in pypi.new_requests() if "/files/" in r], "pip's wheels came from upstream"
        # The npm Hugging Face client with its Xet default, through /hf.
        before = len(hub.log())
        p = npm_client("snapshot", dep.url + "/hf", "org/tiny-model", "main", tmp_path / "hf1", TOKEN)
        assert p.returncode == 0, p.stderr
        assert not xet_requests(hub.log()[before:])
        # An MLflow run with a 256 MiB checkpoint, the way MLflow's client logs them.
        exp = dep.mlflow("experiments/create", {"name": "nas"})["experiment_id"]
        run_id = dep.mlflow("runs/create", {"experiment_id": exp, "run_name": "r1",
                                            "start_time": 1})["run"]["info"]["run_id"]
        dep.mlflow("runs/log-batch", {"run_id": run_id, "metrics": [
            {"key": "loss", "value": 0.5, "timestamp": 2, "step": 1}]})
        ckpt = f"{exp}/{run_id}/artifacts/checkpoint.bin"
        status, digest = put_artifact(dep, ckpt, 256 << 20)
        assert status == 200
        assert artifact_digest(dep, ckpt) == digest

        # Non-root, and nothing written outside /data (podman diff: the container's own layer).
        assert run("podman", "exec", dep.container, "id", "-u").stdout.strip() == "8780"
        changed = [line.split(None, 1)[1] for line in
                   run("podman", "diff", dep.container).stdout.splitlines() if line.strip()]
        # /etc and /run/secrets/*: the mount points podman makes (hosts, resolv.conf, secrets).
        assert [c for c in changed if c != "/etc" and not c.startswith(("/data", "/run"))] == [], \
            changed
        owners = {p.stat().st_uid for p in dep.data.rglob("*")}
        assert owners == {8780}, owners

        # SIGTERM (podman stop) while two uploads are in flight: one that goes on sending
        # finishes; one whose client stalls past the grace period leaves nothing visible.
        late, stalled = (f"{exp}/{run_id}/artifacts/{n}.bin" for n in ("late", "stalled"))
        stopped = threading.Event()
        stalled_result = []
        stalled_thread = threading.Thread(target=lambda: stalled_result.append(put_artifact(
            dep, stalled, 64 << 20, pause_after=16 << 20, pause=lambda: stopped.wait(60))))
        stalled_thread.start()
        stopper = threading.Thread(target=lambda: (
            run("podman", "stop", "-t", "25", dep.container), stopped.set()))
        status, late_digest = put_artifact(dep, late, 64 << 20, pause_after=32 << 20,
                                           pause=lambda: (stopper.start(), time.sleep(0.5)))
        stopper.join()
        stalled_thread.join()
        assert stalled_result[0][0] is None  # its connection was closed without an answer
        dep.down()

        # Up again: the run, both artifacts' states and the cached files are all there.
        pypi.new_requests()
        hub_before = len(hub.log())
        dep.up()
        got = dep.request("/api/2.0/mlflow/runs/get?run_id=" + run_id)
        assert got[0] == 200 and json.loads(got[1])["run"]["data"]["metrics"][0]["value"] == 0.5
        assert artifact_digest(dep, ckpt) == digest
        after = artifact_digest(dep, late)
        assert after == (late_digest if status == 200 else 404), (status, after)
        assert artifact_digest(dep, stalled) == 404
        status, listing = dep.request(f"/api/2.0/mlflow-artifacts/artifacts?path={exp}/{run_id}/artifacts")
        names = sorted(f["path"] for f in json.loads(listing)["files"])
        assert names == ["checkpoint.bin"] + (["late.bin"] if after != 404 else []), names
        pip_install(tmp_path, index, "ferrydemo-alpha", "FerryDemo_Gamma")
        assert not [r for r in pypi.new_requests() if "/files/" in r], "a wheel was fetched again"
        p = npm_client("snapshot", dep.url + "/hf", "org/tiny-model", "main", tmp_path / "hf2", TOKEN)
        assert p.returncode == 0, p.stderr
        assert not [e for e in hub.log()[hub_before:] if e["server"] == "cdn"], \
            "an LFS blob was fetched again"
    finally:
        dep.compose("down", check=False)


def test_compose_with_postgres_keeps_the_tracker_in_the_database(image, upstreams, tmp_path):
    dep = Deployment(tmp_path, upstreams, postgres=True)
    try:
        dep.up()
        exp = dep.mlflow("experiments/create", {"name": "pg"})["experiment_id"]
        run_id = dep.mlflow("runs/create", {"experiment_id": exp})["run"]["info"]["run_id"]
        assert not (dep.data / "tracker/tracker.db").exists()  # the runs are in PostgreSQL
        env = run("podman", "inspect", dep.container, "--format", "{{.Config.Env}}").stdout
        assert "s3cret-pg-pass" not in env  # the password is a secret file, never config
        dep.down()
        dep.up()
        got = dep.request("/api/2.0/mlflow/runs/get?run_id=" + run_id)
        assert got[0] == 200, got
    finally:
        dep.compose("down", "-v", check=False)


def test_the_image_refuses_to_serve_the_lan_without_tokens_unless_told(image, tmp_path):
    base = ["podman", "run", "--rm", "-e", "ASAN_OPTIONS=detect_leaks=0"]
    p = run(*base, image, check=False, timeout=120)
    assert p.returncode == 2
    assert "ferry-entrypoint: no token file at /run/secrets/ferry_tokens" in p.stderr
    assert "refusing to serve 0.0.0.0:8780" in p.stderr
    # Told: anyone may read and write, and the binary's own check is satisfied.
    port = free_port()
    name = f"ferry-anon-{port}"
    run(*base[:3], "-d", "--name", name, "-p", f"127.0.0.1:{port}:8780",
        "-e", "ASAN_OPTIONS=detect_leaks=0", "-e", "FERRY_ALLOW_ANONYMOUS=1", image)
    try:
        def healthy():
            try:
                return urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5).read()
            except OSError:
                return None
        assert wait_for(healthy, "the anonymous container", 60) == b"ok\n"
        # A first argument that is not an option runs that command (ferry's own --version).
        v = run("podman", "run", "--rm", image, "ferry", "--version")
        assert v.stdout.startswith("ferry ")
    finally:
        run("podman", "rm", "-f", name, check=False)
