"""`ferry serve` on a shared LAN, attacked as someone on the LAN or a web page in the user's browser
would (docs/semantics/serve.md, "Threat model"; issue 28). The real binary over real sockets, the
Hub stand-in (tests/tools/hf_standin.py, which logs every request's Authorization) and a
header-dumping PyPI upstream in this process (which logs every header of every request). Each test
is a regression test of a hole the adversarial sweep found; the browser half (stored XSS, CSRF
from another origin in Chromium) is in test_ui.py."""
import base64
import hashlib
import http.client
import http.server
import json
import pathlib
import signal
import socket
import threading
import time
import urllib.parse

import pytest

from hf_helpers import Hub
from serve_helpers import LocalServer, ServeProcess

ROOT = pathlib.Path(__file__).resolve().parents[2]
WRITER = "writer-tok-3f9a7c"
READER = "reader-tok-81d2e4"
HF_OWN = "hf_clients_own_token"
WHEEL = b"PK\x03\x04 not really a wheel, but bytes with a sha256"
WHEEL_SHA = hashlib.sha256(WHEEL).hexdigest()


def call(url, path, method="GET", body=None, headers=None, host=None):
    """(status, headers dict lower-cased, body bytes) over a fresh connection; `host` overrides
    the Host header."""
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    h = dict(headers or {})
    if host is not None:
        h["Host"] = host
    data = json.dumps(body).encode() if isinstance(body, (dict, list)) else body
    try:
        conn.request(method, path, body=data, headers=h)
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        conn.close()


def bearer(token):
    return {"Authorization": "Bearer " + token}


def basic(token, user="lab"):
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{token}".encode()).decode()}


JSON = {"Content-Type": "application/json"}


def rss_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


class DumpingUpstream:
    """A PyPI index that logs every header of every request. Projects: `demo` (a file with its
    sha256), `evil` (a link without a hash to a loopback service that must never be fetched),
    `hop` (a link to a path here that redirects to that service, then to the metadata address).
    """

    def __init__(self, secret_url):
        self.requests = []
        outer = self

        class H(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_HEAD(self):
                self.do_GET()

            def do_GET(self):
                outer.requests.append({"path": self.path, "headers": dict(self.headers.items())})
                pages = {
                    "/simple/": b'<a href="demo/">demo</a><a href="evil/">evil</a>',
                    "/simple/demo/": f'<a href="/files/demo-1.0-py3-none-any.whl#sha256={WHEEL_SHA}">'
                                     f'demo-1.0-py3-none-any.whl</a>'.encode(),
                    "/simple/evil/": f'<a href="{secret_url}/evil-1.0-py3-none-any.whl">'
                                     f'evil-1.0-py3-none-any.whl</a>'.encode(),
                    "/simple/hop/": b'<a href="/redirect/hop-1.0-py3-none-any.whl">'
                                    b'hop-1.0-py3-none-any.whl</a>',
                }
                if self.path in pages:
                    return self.answer(200, pages[self.path], "text/html")
                if self.path == "/files/demo-1.0-py3-none-any.whl":
                    return self.answer(200, WHEEL, "application/octet-stream")
                if self.path.startswith("/redirect/"):
                    self.send_response(302)
                    self.send_header("Location", secret_url + "/hop-1.0-py3-none-any.whl")
                    self.send_header("Content-Length", "0")
                    return self.end_headers()
                return self.answer(404, b"not found", "text/plain")

            def answer(self, code, body, ctype):
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

        self.server = LocalServer(H)
        self.url = self.server.url + "/simple/"

    def stop(self):
        self.server.stop()


class Secret:
    """A loopback service only the server's host can reach (an admin port): counts its hits."""

    def __init__(self):
        self.hits = 0
        outer = self

        class H(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_GET(self):
                outer.hits += 1
                body = b"TOP SECRET internal answer"
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = LocalServer(H)
        self.url = self.server.url

    def stop(self):
        self.server.stop()


@pytest.fixture(scope="module")
def lan(ferry_bin, tmp_path_factory):
    """A lab's server: read-write and read-only tokens, the Hub stand-in and the dumping PyPI
    upstream, the server's own Hub token for gated repos."""
    d = tmp_path_factory.mktemp("lan")
    (d / "rw").write_text(WRITER + "\n")
    (d / "ro").write_text(READER + "\n")
    (d / "hf").write_text("hf_granted\n")
    (d / "data").mkdir()
    secret = Secret()
    pypi = DumpingUpstream(secret.url)
    hub = Hub(d / "hub", lfs_size=200_000)
    s = ServeProcess(ferry_bin, d / "data", "--token-file", d / "rw", "--read-token-file", d / "ro",
                     "--hf-upstream", hub.url, "--upstream-allow", hub.cdn,
                     "--pypi-upstream", pypi.url, "--hf-token-file", d / "hf")
    s.hub, s.pypi, s.secret, s.dir = hub, pypi, secret, d
    yield s
    s.stop()
    hub.stop()
    pypi.stop()
    secret.stop()


@pytest.fixture(scope="module")
def default(ferry_bin, tmp_path_factory):
    """The default server: loopback, no tokens."""
    d = tmp_path_factory.mktemp("default")
    s = ServeProcess(ferry_bin, d / "data")
    s.dir = d
    yield s
    s.stop()


def raw(url, data, read=True):
    u = urllib.parse.urlsplit(url)
    with socket.create_connection((u.hostname, u.port), timeout=30) as c:
        c.sendall(data)
        if not read:
            return b""
        c.shutdown(socket.SHUT_WR)
        out = b""
        while chunk := c.recv(65536):
            out += chunk
        return out


def test_a_chunked_trailer_past_64_kib_no_longer_kills_the_server(lan, default):
    """One unauthenticated request aborted ferry serve (SIGABRT), 4 of 4 tries, with or without
    --token-file. With tokens it is now refused before its body is read at all; without, and on
    the public /healthz, its trailer is held to the header limit."""
    trailer = b"0\r\nX: " + b"a" * 70000 + b"\r\n\r\n"
    for _ in range(4):
        for server, method, code in ((lan, b"POST", b"401"), (lan, b"GET", b"431"),
                                     (default, b"POST", b"431")):
            answer = raw(server.url, method + b" /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                     b"Transfer-Encoding: chunked\r\n\r\n" + trailer)
            assert answer.startswith(b"HTTP/1.1 " + code), (method, answer[:200])
            assert server.proc.poll() is None
    for size in (1000, 17000):  # 1-17 KB were accepted too; now held to the 16 KiB header limit
        answer = raw(lan.url, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: "
                              b"chunked\r\n\r\n0\r\nX: " + b"a" * size + b"\r\n\r\n")
        assert answer.startswith(b"HTTP/1.1 431" if size > 16384 else b"HTTP/1.1 200"), answer[:100]
    answer = raw(lan.url, b"POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: "
                          b"xchunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 501"), answer[:100]
    assert call(lan.url, "/healthz")[0] == 200


def test_bodies_of_clients_without_a_token_are_refused_before_they_are_read(lan):
    """40 unauthenticated connections sending 16 MiB bodies took the server from 17 to 673 MB."""
    before = rss_kib(lan.proc.pid)
    socks = []
    head = (b"POST /api/2.0/mlflow/runs/log-batch HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
            b"application/json\r\nContent-Length: 16777216\r\n\r\n")
    for _ in range(40):
        c = socket.create_connection(("127.0.0.1", int(lan.url.rsplit(":", 1)[1])), timeout=30)
        c.sendall(head)
        socks.append(c)
    for c in socks:
        try:
            c.sendall(b"x" * (1 << 20))  # what the server reads of it goes nowhere
        except OSError:
            pass  # closed after its 401: fine
    answers = []
    for c in socks:
        data = b""
        try:
            while b"\r\n\r\n" not in data and (chunk := c.recv(4096)):
                data += chunk
        except OSError:
            pass
        answers.append(data)
        c.close()
    assert all(a.startswith(b"HTTP/1.1 401") for a in answers), answers[0][:200]
    assert rss_kib(lan.proc.pid) - before < 64 * 1024, (before, rss_kib(lan.proc.pid))


def test_artifacts_never_render_on_the_ui_origin(lan):
    """An uploaded evil.html was served as text/html from the UI's origin, without CSP."""
    exp = json.loads(call(lan.url, "/api/2.0/mlflow/experiments/create", "POST",
                          {"name": "xss"}, {**bearer(WRITER), **JSON})[2])["experiment_id"]
    run = json.loads(call(lan.url, "/api/2.0/mlflow/runs/create", "POST", {"experiment_id": exp},
                          {**bearer(WRITER), **JSON})[2])["run"]["info"]
    root = run["artifact_uri"].removeprefix("mlflow-artifacts:/")
    page = b"<script>fetch('/api/ferry/whoami').then(r => r.text()).then(alert)</script>"
    for name in ("evil.html", "evil.HTML", "evil.svg", "evil.xhtml"):
        path = f"/api/2.0/mlflow-artifacts/artifacts/{root}/{name}"
        assert call(lan.url, path, "PUT", page, bearer(WRITER))[0] == 200
        status, h, body = call(lan.url, path, headers=bearer(READER))
        assert status == 200 and body == page
        assert h["content-disposition"].startswith("attachment"), h
        assert h["x-content-type-options"] == "nosniff"
        assert "sandbox" in h["content-security-policy"] and "default-src 'none'" in h["content-security-policy"]
        assert "html" not in h["content-type"] and "svg" not in h["content-type"] and "xml" not in h["content-type"]
    # The UI's own pages: scripts from this server only, never inline, never framed.
    _, h, index = call(lan.url, "/")
    csp = h["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp and "frame-ancestors 'none'" in csp
    assert b"onclick=" not in index and b"<script>" not in index


def test_the_sign_in_cookie_is_set_by_the_server_and_scripts_cannot_read_it(lan):
    status, h, _ = call(lan.url, "/api/ferry/signin", "POST", None, bearer(READER))
    assert status == 204
    cookie = h["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
    value = cookie.split(";", 1)[0].split("=", 1)[1]
    assert READER not in cookie and value.startswith("v1.")
    jar = {"Cookie": "ferry_token=" + value}
    assert json.loads(call(lan.url, "/api/ferry/whoami", headers=jar)[2]) == {
        "auth_required": True, "access": "read", "signed_in": True}
    assert call(lan.url, "/api/2.0/mlflow/experiments/search?max_results=5", headers=jar)[0] == 200
    # A writer's cookie still only reads; the token itself is no cookie; a bad token is no sign-in.
    _, h, _ = call(lan.url, "/api/ferry/signin", "POST", None, bearer(WRITER))
    writer_jar = {"Cookie": h["set-cookie"].split(";", 1)[0], **JSON}
    assert call(lan.url, "/api/2.0/mlflow/experiments/create", "POST", {"name": "c"}, writer_jar)[0] == 403
    assert call(lan.url, "/api/2.0/mlflow/experiments/search", headers={"Cookie": "ferry_token=" + WRITER})[0] == 401
    assert call(lan.url, "/api/ferry/signin", "POST", None, bearer("guess"))[0] == 401
    # Signing in from another origin's page is refused (it would need a preflight anyway).
    assert call(lan.url, "/api/ferry/signin", "POST", None,
                {**bearer(READER), "Origin": "http://evil.example"})[0] == 403
    status, h, _ = call(lan.url, "/api/ferry/signout", "POST", None, JSON)
    assert status == 204 and "Max-Age=0" in h["set-cookie"]
    assert WRITER not in lan.log() and READER not in lan.log()


def ferry_secrets():
    """Every form in which a Ferry credential could leak."""
    out = {WRITER, READER}
    for t in (WRITER, READER):
        out.add(base64.b64encode(f"lab:{t}".encode()).decode())
    return out


AUTH_WAYS = {
    "bearer-writer": bearer(WRITER),
    "bearer-reader": bearer(READER),
    "basic-writer": basic(WRITER),
    "basic-token-as-user": {"Authorization": "Basic " + base64.b64encode(f"{READER}:".encode()).decode()},
}


def test_no_ferry_token_ever_reaches_an_upstream(lan):
    """Ferry's tokens were forwarded to the Hub (Authorization on resolve HEAD, GET, /api)."""
    _, h, _ = call(lan.url, "/api/ferry/signin", "POST", None, bearer(READER))
    cookie = h["set-cookie"].split(";", 1)[0]
    ways = dict(AUTH_WAYS, cookie={"Cookie": cookie})
    secrets = ferry_secrets() | {cookie.split("=", 1)[1]}
    hf = "/hf/api/models/org/tiny-model"
    for name, auth in ways.items():
        routes = [
            ("HEAD", "/hf/org/tiny-model/resolve/main/config.json", None),
            ("GET", "/hf/org/tiny-model/resolve/main/config.json", None),
            ("GET", "/hf/org/tiny-model/resolve/main/model.safetensors", None),
            ("GET", "/hf/org/gated-model/resolve/main/weights.bin", None),
            ("GET", hf, None), ("GET", hf + "/revision/main", None),
            ("GET", hf + "/tree/main?recursive=true", None),
            ("POST", hf + "/paths-info/main", b"paths=config.json"),
            ("GET", "/pypi/simple/", None), ("GET", "/pypi/simple/demo/", None),
            ("GET", f"/pypi/files/demo/sha256/{WHEEL_SHA}/demo-1.0-py3-none-any.whl", None),
        ]
        for method, path, body in routes:
            headers = dict(auth)
            if body is not None:
                headers["Content-Type"] = "application/x-www-form-urlencoded"
            status, _, got = call(lan.url, path, method, body, headers)
            assert status < 400 or (name == "cookie" and method == "POST"), (name, method, path, status, got[:200])
    # The gated repo came through with the server's own Hub token, never a client's Ferry token.
    hub_auths = [e["headers"].get("Authorization", "") for e in lan.hub.log()]
    assert any(a == "Bearer hf_granted" for a in hub_auths)
    hub_requests = json.dumps(lan.hub.log())  # every header, every path and query
    pypi_requests = json.dumps(lan.pypi.requests)
    for s in secrets:
        assert s not in hub_requests, s
        assert s not in pypi_requests, s
    assert len(lan.pypi.requests) >= 3 and len(lan.hub.log()) >= 8


def test_a_clients_own_hub_token_goes_upstream_only_where_no_ferry_token_is_needed(ferry_bin, tmp_path):
    """--anonymous-read hf: the caches open to the LAN, the tracker behind tokens. There a
    client's own Hub token (not a Ferry token) is forwarded; a Ferry token is removed."""
    (tmp_path / "rw").write_text(WRITER + "\n")
    hub = Hub(tmp_path / "hub", lfs_size=200_000)
    s = ServeProcess(ferry_bin, tmp_path / "data", "--token-file", tmp_path / "rw",
                     "--anonymous-read", "hf", "--hf-upstream", hub.url, "--upstream-allow", hub.cdn)
    try:
        gated = "/hf/org/gated-model/resolve/main/config.json"
        assert call(s.url, gated)[0] == 401  # GatedRepo, from upstream: no token at all
        assert call(s.url, gated, headers=bearer("hf_granted"))[0] == 200
        assert call(s.url, "/hf/org/tiny-model/resolve/main/config.json", headers=bearer(WRITER))[0] == 200
        assert call(s.url, "/api/2.0/mlflow/experiments/search")[0] == 401  # the tracker is not open
        assert call(s.url, "/pypi/simple/")[0] == 401
        auths = [e["headers"].get("Authorization", "") for e in hub.log()]
        assert "Bearer hf_granted" in auths
        assert not any(WRITER in a for a in auths)
    finally:
        s.stop()
        hub.stop()


def test_cross_site_writes_and_dns_rebinding_are_refused(default):
    """A page on another local origin created experiments and deleted runs through text/plain
    form and no-cors POSTs; any Host header was accepted."""
    api = "/api/2.0/mlflow/experiments/create"
    for headers in ({"Content-Type": "text/plain;charset=UTF-8"},
                    {"Content-Type": "application/x-www-form-urlencoded"},
                    {"Content-Type": "multipart/form-data; boundary=b"},
                    {},
                    {**JSON, "Origin": "http://127.0.0.1:5500"},
                    {**JSON, "Origin": "null"},
                    {**JSON, "Sec-Fetch-Site": "same-site"}):
        status, _, body = call(default.url, api, "POST", json.dumps({"name": "forged"}).encode(), headers)
        assert status in (403, 415), (headers, status, body)
    status, _, body = call(default.url, api, "POST", {"name": "rebound"}, JSON, host="evil.example:8780")
    assert status == 403 and b"Host" in body
    assert call(default.url, "/api/2.0/mlflow/experiments/search?max_results=5", host="evil.example")[0] == 403
    # Programs (no Origin, JSON) and this server's own pages still write.
    assert call(default.url, api, "POST", {"name": "mine"}, JSON)[0] == 200
    assert call(default.url, api, "POST", {"name": "from-the-ui"},
                {**JSON, "Origin": default.url, "Sec-Fetch-Site": "same-origin"})[0] == 200
    names = [e["name"] for e in json.loads(call(default.url, "/api/2.0/mlflow/experiments/search?max_results=50")[2])["experiments"]]
    assert "forged" not in names and "rebound" not in names and "mine" in names


def test_upstream_answers_cannot_aim_the_proxy_at_other_hosts(lan):
    """A PyPI file link without a hash to a loopback service was fetched and returned; redirects
    and links to 169.254.169.254 were followed (only the scheme was checked)."""
    for project in ("evil", "hop"):
        status, _, page = call(lan.url, f"/pypi/simple/{project}/", headers=bearer(READER))
        assert status == 200, page
        link = page.decode().split('href="', 1)[1].split('"', 1)[0]
        path = urllib.parse.urlsplit(urllib.parse.urljoin(lan.url + f"/pypi/simple/{project}/", link)).path
        status, _, body = call(lan.url, path, headers=bearer(READER))
        assert status >= 400 and b"TOP SECRET" not in body, (project, status, body[:300])
    assert lan.secret.hits == 0
    # The refusal says why and what would allow it.
    status, _, body = call(lan.url, path, headers=bearer(READER))
    assert b"--upstream-allow" in body, body


def test_a_gated_blob_is_not_served_through_another_repo(lan):
    """The content-addressed cache served a gated repo's blob anonymously through a public repo
    whose metadata named the same sha256."""
    gated = call(lan.url, "/hf/org/gated-model/resolve/main/weights.bin", headers=bearer(READER))
    assert gated[0] == 200 and len(gated[2]) == 100_000  # cached, through the server's Hub token
    status, _, body = call(lan.url, "/hf/org/copycat/resolve/main/weights.bin", headers=bearer(READER))
    assert status == 403 and body != gated[2], (status, body[:200])
    assert call(lan.url, "/hf/org/copycat/resolve/main/README.md", headers=bearer(READER))[0] == 200


def test_every_count_range_and_size_is_bounded_before_work_begins(lan):
    w = {**bearer(WRITER), **JSON}
    exp = json.loads(call(lan.url, "/api/2.0/mlflow/experiments/create", "POST", {"name": "bounds"}, w)[2])["experiment_id"]
    run = json.loads(call(lan.url, "/api/2.0/mlflow/runs/create", "POST", {"experiment_id": exp}, w)[2])["run"]["info"]
    rid = run["run_id"]
    metrics = [{"key": "m", "value": i, "timestamp": 1000 + i, "step": i} for i in range(100)]
    assert call(lan.url, "/api/2.0/mlflow/runs/log-batch", "POST", {"run_id": rid, "metrics": metrics}, w)[0] == 200
    # A read token was enough to keep a core busy forever; SIGTERM then no longer stopped it.
    started = time.monotonic()
    q = f"run_ids={rid}&metric_key=m&start_step={-2**63}&end_step={2**63 - 1}&max_results=320"
    status, _, body = call(lan.url, "/api/2.0/mlflow/metrics/get-history-bulk-interval?" + q,
                           headers=bearer(READER))
    assert status == 200 and time.monotonic() - started < 10
    assert len(json.loads(body)["metrics"]) == 100  # MLflow returns all 100 (was 2)
    # A 15 MB run name; a 5 PiB upload; 1e999; a timestamp of 2^63.
    status, _, body = call(lan.url, "/api/2.0/mlflow/runs/update", "POST",
                           {"run_id": rid, "run_name": "n" * (15 << 20)}, w)
    assert status == 400 and len(body) < 1000, body[:300]
    root = run["artifact_uri"].removeprefix("mlflow-artifacts:/")
    status, _, body = call(lan.url, f"/api/2.0/mlflow-artifacts/mpu/create/{root}/big.bin", "POST",
                           {"num_parts": 2, "size": 5 << 50, "part_size": 5 << 49}, w)
    assert status == 400, body
    status, _, body = call(lan.url, "/api/2.0/mlflow/runs/log-metric", "POST",
                           b'{"run_id": "%s", "key": "x", "value": 1e999, "timestamp": 1}' % rid.encode(), w)
    assert status == 400 and b"out of range" in body and b"nlohmann" not in body and b"406" not in body, body
    for ts in (2**63, -1, 2**62):
        status, _, body = call(lan.url, "/api/2.0/mlflow/runs/log-metric", "POST",
                               {"run_id": rid, "key": "x", "value": 1, "timestamp": ts}, w)
        assert status == 400, (ts, body)
    # Names that are not UTF-8 cannot be listed as fetched: refused when written.
    status, _, body = call(lan.url, f"/api/2.0/mlflow-artifacts/artifacts/{root}/caf%E9.txt", "PUT",
                           b"x", bearer(WRITER))
    assert status == 400 and b"UTF-8" in body
    # No answer names the server's own paths.
    status, _, body = call(lan.url, f"/api/2.0/mlflow-artifacts/artifacts/{root}/nothing-here", headers=bearer(READER))
    assert status == 404 and str(lan.dir).encode() not in body and str(lan.dir)[1:].encode() not in body, body


def test_sigterm_stops_the_server_in_time_whatever_its_workers_do(ferry_bin, tmp_path):
    """A handler blocked on an upstream that never answers must not keep ferry serve alive."""
    hang = socket.socket()
    hang.bind(("127.0.0.1", 0))
    hang.listen(16)  # accepts, never answers
    port = hang.getsockname()[1]
    s = ServeProcess(ferry_bin, tmp_path / "data", "--hf-upstream", f"http://127.0.0.1:{port}",
                     "--stall-timeout", "3600")
    threading.Thread(target=call, args=(s.url, "/hf/org/m/resolve/main/config.json"),
                     daemon=True).start()
    upstream_side, _ = hang.accept()  # the handler's HEAD reached the upstream, which says nothing
    started = time.monotonic()
    s.proc.send_signal(signal.SIGTERM)
    s.proc.wait(timeout=40)
    took = time.monotonic() - started
    assert took < 25, took  # 10 s for responses in flight, then 10 s at most to close the rest
    assert "exiting without them" in s.log() or took < 12
    upstream_side.close()
    hang.close()
