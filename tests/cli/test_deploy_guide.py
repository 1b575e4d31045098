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
