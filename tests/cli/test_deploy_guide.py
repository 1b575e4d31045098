"""docs/guides/deploy-on-a-nas.md's nginx block as written, in front of a real `ferry serve` with
tokens: only the certificate paths, the listen address and the upstream port are replaced (a
self-signed certificate made here). Through it, over TLS: the UI loads, a 40 MiB checkpoint goes up
as a multipart upload whose part URLs point back at the proxy with https (X-Forwarded-Proto),
and comes back byte-exact."""
import hashlib
import json
import os
import pathlib
import re
import shlex
import shutil
import socket
import ssl
import subprocess
import time
import urllib.request

import pytest

from serve_helpers import ServeProcess

ROOT = pathlib.Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs/guides/deploy-on-a-nas.md"
API = "/api/2.0/mlflow-artifacts"
TOKEN = "guide-token-0123456789abcdef"


def nginx_block():
    blocks = re.findall(r"```nginx\n(.*?)```", GUIDE.read_text(), re.S)
    assert len(blocks) == 1, "the guide has one nginx block"
    return blocks[0]


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@pytest.fixture
def proxied(ferry_bin, tmp_path):
    if not shutil.which("nginx", path="/usr/sbin:/usr/bin") or not shutil.which("openssl"):
        pytest.fail("nginx (Debian nginx-light) and openssl are needed: run scripts/install-deps.sh")
    (tmp_path / "tokens").write_text(TOKEN + "\n")
    server = ServeProcess(ferry_bin, tmp_path / "data", "--token-file", tmp_path / "tokens")
    serve_port = server.url.rsplit(":", 1)[1]
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=localhost", "-keyout", tmp_path / "key.pem",
                    "-out", tmp_path / "cert.pem"], check=True, capture_output=True)
    port = free_port()
    site = nginx_block()
    site = site.replace("listen 443 ssl;", f"listen 127.0.0.1:{port} ssl;")
    site = site.replace("/etc/ssl/certs/nas.example.com.pem", str(tmp_path / "cert.pem"))
    site = site.replace("/etc/ssl/private/nas.example.com.key", str(tmp_path / "key.pem"))
    site = site.replace("server 127.0.0.1:8780;", f"server 127.0.0.1:{serve_port};")
    assert str(port) in site and serve_port in site
    for d in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (tmp_path / "nginx" / d).mkdir(parents=True, exist_ok=True)
    conf = tmp_path / "nginx" / "nginx.conf"
    conf.write_text(f"""daemon off;
pid {tmp_path}/nginx/nginx.pid;
error_log {tmp_path}/nginx/error.log warn;
events {{}}
http {{
  access_log off;
  client_body_temp_path {tmp_path}/nginx/body;
  proxy_temp_path {tmp_path}/nginx/proxy;
  fastcgi_temp_path {tmp_path}/nginx/fastcgi;
  uwsgi_temp_path {tmp_path}/nginx/uwsgi;
  scgi_temp_path {tmp_path}/nginx/scgi;
{site}
}}
""")
    nginx = subprocess.Popen(["/usr/sbin/nginx", "-c", str(conf), "-e", str(tmp_path / "nginx/error.log")],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            assert nginx.poll() is None, nginx.stderr.read().decode()
            time.sleep(0.05)
    try:
        yield f"https://localhost:{port}", server
    finally:
        nginx.terminate()
        nginx.wait(timeout=20)
        server.stop()


def call(url, method="GET", body=None, headers=None):
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    h = {"Authorization": f"Bearer {TOKEN}", **(headers or {})}
    data = json.dumps(body).encode() if isinstance(body, dict) else body
    if isinstance(body, dict):
        h["Content-Type"] = "application/json"
    req = urllib.request.Request(url, data=data, method=method, headers=h)
    with urllib.request.urlopen(req, context=ctx, timeout=120) as r:
        payload = r.read()
        # By the answer's type, not its first byte: a random artifact may start with "{".
        json_answer = r.headers.get("Content-Type", "").startswith("application/json")
        return json.loads(payload) if json_answer else payload


def test_the_guides_nginx_block_streams_a_multipart_checkpoint_over_tls(proxied):
    url, server = proxied
    assert b"<title>Ferry</title>" in call(url + "/")
    exp = call(url + "/api/2.0/mlflow/experiments/create", "POST", {"name": "via-proxy"})["experiment_id"]
    run = call(url + "/api/2.0/mlflow/runs/create", "POST", {"experiment_id": exp})["run"]
    root = run["info"]["artifact_uri"].split(":", 1)[1].lstrip("/")
    blob = os.urandom(40 << 20)
    parts = [blob[:16 << 20], blob[16 << 20:32 << 20], blob[32 << 20:]]
    created = call(f"{url}{API}/mpu/create/{root}/checkpoints/step-10/model.pt", "POST",
                   {"num_parts": len(parts)})
    urls = [c["url"] for c in created["credentials"]]
    assert all(u.startswith(url + API + "/mpu/part/") for u in urls), urls  # https, via the proxy
    etags = []
    for n, (u, data) in enumerate(zip(urls, parts), 1):
        etags.append({"part_number": n, "etag": call(u, "PUT", data)["etag"]})
    call(f"{url}{API}/mpu/complete/{root}/checkpoints/step-10/model.pt", "POST",
         {"upload_id": created["upload_id"], "parts": etags})
    got = call(f"{url}{API}/artifacts/{root}/checkpoints/step-10/model.pt")
    assert hashlib.sha256(got).hexdigest() == hashlib.sha256(blob).hexdigest()
    assert TOKEN not in server.log()


def guide_block(marker):
    """The guide's ```sh block whose info string contains `marker`."""
    blocks = re.findall(r"```sh ([^\n]*)\n(.*?)```", GUIDE.read_text(), re.S)
    found = [text for info, text in blocks if marker in info]
    assert len(found) == 1, f"the guide has one block marked {marker!r}"
    return found[0]


def test_the_guides_client_settings_work_from_another_host(ferry_bin, tmp_path):
    """Section 7 as written, on a second host (a network namespace, `nas` in its /etc/hosts)
    against a server with tokens on the NAS's address (section 3's LAN command): pip installs
    through the cache with the token in the index URL, ferry.track logs a run with
    MLFLOW_TRACKING_TOKEN, the npm Hugging Face client downloads with HF_ENDPOINT and HF_TOKEN (a
    gated repo through the server's --hf-token-file), and the UI's sign-in sets its cookie; no
    token reaches the server's log or an upstream."""
    from hf_helpers import Hub, NPM
    from multihost_helpers import Hosts
    from pypi_helpers import Upstream
    pypi = Upstream(tmp_path / "pypi")
    hub = Hub(tmp_path / "hub", lfs_size=200_000)
    hosts = Hosts(1)
    netns_etc = pathlib.Path("/etc/netns") / hosts.names[0]
    server = None
    try:
        netns_etc.mkdir(parents=True, exist_ok=True)
        (netns_etc / "hosts").write_text(f"127.0.0.1 localhost\n{hosts.gateway} nas\n")
        for name, token in (("tokens", TOKEN), ("read-tokens", "hf_guide-read-0123456789"),
                            ("hf-token", "hf_granted")):
            (tmp_path / name).write_text(token + "\n")
        # Section 3's LAN command as written, its paths and address mapped to this test's.
        words = shlex.split(guide_block("starts this server on a network-namespace address").replace("\\\n", " "))
        assert words[:2] == ["ferry", "serve"] and "--allow-remote" in words
        mapped = {"/srv/nas/ferry": tmp_path / "data", "/var/cache/ferry-spool": tmp_path / "spool",
                  "192.168.1.10:8780": f"{hosts.gateway}:0"}
        args = [str(mapped.get(w, tmp_path / w.removeprefix("/etc/ferry/") if w.startswith("/etc/ferry/") else w))
                for w in words[2:]]
        (tmp_path / "spool").mkdir()
        data, listen = args[args.index("--data") + 1], args[args.index("--listen") + 1]
        rest = [a for i, a in enumerate(args) if a not in ("--data", "--listen")
                and (i == 0 or args[i - 1] not in ("--data", "--listen"))]
        server = ServeProcess(ferry_bin, data, *rest, "--hf-upstream", hub.url,
                              "--upstream-allow", hub.cdn, "--pypi-upstream", pypi.pypi, listen=listen)
        port = server.url.rsplit(":", 1)[1]
        home = tmp_path / "home"
        (home / ".config/ferry").mkdir(parents=True)
        (home / ".config/ferry/token").write_text(TOKEN + "\n")
        (home / ".config/ferry/read-token").write_text("hf_guide-read-0123456789\n")
        subprocess.run(["/usr/bin/python3", "-m", "venv", "--without-pip", "--system-site-packages",
                        tmp_path / "venv"], check=True)
        # The venv's `pip`: Debian's pip module run by the venv's python (no copy of pip).
        (tmp_path / "venv/bin/pip").write_text('#!/bin/sh\nexec "$(dirname "$0")/python" -m pip "$@"\n')
        (tmp_path / "venv/bin/pip").chmod(0o755)
        settings = guide_block("runs this block as written").replace("nas:8780", f"nas:{port}")
        then = guide_block("after the block above").replace("nas:8780", f"nas:{port}")
        then = then.replace("pip install numpy", "pip install --no-cache-dir ferrydemo-alpha")
        script = tmp_path / "client.sh"
        script.write_text("set -euo pipefail\n" + settings + then +
                          f'node {NPM / "hf_client.mjs"} file "$HF_ENDPOINT" org/gated-model main '
                          f'config.json {tmp_path / "hf-cache"} "$HF_TOKEN"\n')
        env = {"HOME": str(home), "PATH": f"{tmp_path / 'venv/bin'}:/usr/bin:/bin",
               "PYTHONPATH": str(ROOT / "python"), "PIP_CONFIG_FILE": "/dev/null",
               "PIP_DISABLE_PIP_VERSION_CHECK": "1", "NODE_PATH": str(NPM / "node_modules")}
        p = hosts.run(0, ["bash", script], env=env, capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
        assert "Successfully installed ferrydemo-alpha" in p.stdout, p.stdout
        assert '"gated": true' in (tmp_path / "hf-cache").joinpath(
            json.loads(p.stdout.strip().splitlines()[-1])["path"]).read_text()
        assert re.search(r"(?i)set-cookie: ferry_token=v1\.[0-9a-f]+; Path=/; HttpOnly; SameSite=Strict",
                         p.stdout), p.stdout
        exps = call_plain(server.url, "/api/2.0/mlflow/experiments/search?max_results=10")
        assert "hello" in [e["name"] for e in exps["experiments"]]
        for secret in (TOKEN, "hf_guide-read-0123456789"):
            assert secret not in server.log()
            assert not any(secret in json.dumps(e) for e in hub.log())
    finally:
        if server:
            server.stop()
        hosts.close()
        shutil.rmtree(netns_etc, ignore_errors=True)
        hub.stop()
        pypi.stop()


def call_plain(url, path):
    req = urllib.request.Request(url + path, headers={"Authorization": f"Bearer {TOKEN}"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read())
