#!/usr/bin/env python3
"""A local stand-in for the Hugging Face Hub and its CDN, for testing `ferry serve`'s /hf proxy
with real clients (docs/semantics/hf.md lists the behaviour it reproduces).

  tests/tools/hf_standin.py --port-file HUB_PORT --cdn-port-file CDN_PORT [--log LOG.jsonl]
                            [--lfs-size BYTES] [--lifetime SECONDS] [--direct-lfs] [--host ADDR]
                            [--no-xet]

Three HTTP servers on 127.0.0.1: the Hub (resolve, API), a CDN that serves LFS blobs only at
signed, expiring URLs, and a Xet CAS that logs what reaches it and serves nothing. Every request
is logged as one JSON line: {"server" (hub|cdn|cas), "method", "path", "range", "auth" (bool),
"ua", "headers" (all of them)} so tests can assert that a warm run makes no upstream requests,
that clients never reach the CDN, and that nothing asks for a Xet token or reaches the CAS.

Xet, as the Hub advertises it in late 2026 (every LFS file is stored on Xet; --no-xet turns all
of it off): tree and paths-info entries of LFS files carry `xetHash` (64 hex) beside `lfs`; repo
info carries `xetEnabled: true`; an LFS resolve answer adds `X-Xet-Hash`, `X-Xet-Refresh-Route`
and `Link: <...xet-read-token/{commit}>; rel="xet-auth", <{cas}/v1/reconstructions/{hash}>;
rel="xet-reconstruction-info"`; a resolve GET whose Accept names
application/vnd.xet-fileinfo+json (what @huggingface/hub sends) is answered 200 with that type,
a JSON file info and those headers, no bytes; GET /api/{kind}/{repo}/xet-read-token/{rev} answers
{"accessToken", "exp", "casUrl"} (and X-Xet-Access-Token, X-Xet-Cas-Url, X-Xet-Token-Expiration),
as huggingface_hub's hf_xet and @huggingface/hub's XetBlob read it.

Fixture repos (contents are deterministic; commit ids, git-blob sha1s and sha256s are real):
  models/org/tiny-model      branch main (2 commits: v1.0 tag on the first), small files
                             (config.json, README.md, nested/vocab.txt), LFS files
                             (model.safetensors of --lfs-size bytes, nested/shard-00001.bin,
                             xet.safetensors), each stored on Xet (see above)
  models/org/old-name        renamed: every URL answers 307 with a relative Location to tiny-model
  models/org/gated-model     needs `Authorization: Bearer hf_granted` (401 GatedRepo otherwise)
  models/org/copycat         public; its metadata for weights.bin names gated-model's weights.bin
                             (sha256, size) but the Hub serves no bytes of it (403): a repo that
                             claims another's object, which a shared cache must not hand out
  datasets/org/tiny-dataset  data/train-00000.parquet (LFS), README.md
Behaviour: HEAD/GET {type}/{repo}/resolve/{rev}/{path}: small files answer 307 (relative) to
/api/resolve-cache/...; LFS files answer 302 (absolute) to the CDN with X-Linked-Etag/-Size;
X-Repo-Commit always; errors carry X-Error-Code (RepoNotFound 401, RevisionNotFound 404,
EntryNotFound 404, GatedRepo 401). API: /api/{models,datasets}/{repo}[/revision/{rev}],
/api/.../tree/{rev}[/{path}] (2 entries per page, Link rel="next"), POST /api/.../paths-info/{rev}.
--direct-lfs (for caches that cannot follow a redirect, e.g. nginx proxy_cache in
bench/serve_cache.py): the Hub answers LFS resolve HEAD/GET itself with 200/206 and the bytes (same
X-Repo-Commit, X-Linked-Etag, X-Linked-Size, ETag, Accept-Ranges; no Location, no Xet headers)
instead of 302 to the CDN. --host ADDR: listen on ADDR instead of 127.0.0.1 (e.g. inside a network
namespace) and use it in the CDN and Link URLs. Without these options nothing changes.
Faults (POST /__control with JSON {"cdn": "truncate|corrupt|503|stall", "times": N}) apply to
the next N CDN GETs.
"""
import argparse
import hashlib
import hmac
import json
import random
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SECRET = b"cdn-signing-key"
LOCK = threading.Lock()
FAULTS = {"cdn": None, "times": 0}


_DIGESTS = {}  # (kind, id(data)) -> (data, hex): a GiB file is hashed once, not per request


def _memo(kind, data, fn):
    hit = _DIGESTS.get((kind, id(data)))
    if hit is None or hit[0] is not data:
        hit = _DIGESTS[(kind, id(data))] = (data, fn(data))
    return hit[1]


def git_blob_sha1(data):
    return _memo("sha1", data, lambda d: hashlib.sha1(b"blob %d\0" % len(d) + d).hexdigest())


def sha256_hex(data):
    return _memo("sha256", data, lambda d: hashlib.sha256(d).hexdigest())


def xet_hash(data):
    """A stand-in for the Xet file hash (a merkle hash of the file's chunks on the Hub): 64 hex
    digits, like the real one, and distinct from the sha256."""
    return _memo("xet", data, lambda d: hashlib.sha256(b"xet" + d).hexdigest())


def make_repos(lfs_size):
    rnd = random.Random(13)

    def blob(n):
        if n <= 64 << 20:
            return rnd.randbytes(n)
        # randbytes() cannot make more than 256 MiB at once; big files are built in 16 MiB parts.
        return b"".join(rnd.randbytes(min(16 << 20, n - i)) for i in range(0, n, 16 << 20))

    def commit(files, parent=""):
        h = hashlib.sha1(parent.encode())
        for name in sorted(files):
            h.update(name.encode() + b"\0" + hashlib.sha1(files[name]).digest())
        return h.hexdigest()

    v1 = {"config.json": b'{"hidden": 8}\n', "README.md": b"# tiny v1\n",
          "model.safetensors": blob(lfs_size)}
    main = dict(v1, **{"config.json": b'{"hidden": 16}\n', "README.md": b"# tiny\n",
                       "nested/vocab.txt": b"a\nb\nc\n", "nested/shard-00001.bin": blob(300_000),
                       "xet.safetensors": blob(200_000)})
    c1 = commit(v1)
    c2 = commit(main, c1)
    gated = {"config.json": b'{"gated": true}\n', "weights.bin": blob(100_000)}
    data = {"README.md": b"# data\n", "data/train-00000.parquet": blob(250_000)}
    copycat = {"README.md": b"# copycat\n"}
    return {
        "models/org/copycat": {"commits": {commit(copycat): copycat},
                               "refs": {"main": commit(copycat)},
                               "claims": {"weights.bin": gated["weights.bin"]}},
        "models/org/tiny-model": {"commits": {c1: v1, c2: main}, "refs": {"main": c2, "v1.0": c1}},
        "models/org/gated-model": {"commits": {commit(gated): gated}, "refs": {"main": commit(gated)},
                                   "gated": True},
        "datasets/org/tiny-dataset": {"commits": {commit(data): data}, "refs": {"main": commit(data)}},
    }


LFS_MIN = 100_000  # files at least this large are LFS files


def is_lfs(data):
    return len(data) >= LFS_MIN


class State:
    def __init__(self, lfs_size, log_path):
        self.repos = make_repos(lfs_size)
        self.blobs = {}  # sha256 -> bytes (the CDN's content)
        for repo in self.repos.values():
            for files in repo["commits"].values():
                for data in files.values():
                    git_blob_sha1(data)  # hashed here once, so no request waits for it
                    if is_lfs(data):
                        self.blobs[sha256_hex(data)] = data
        self.log_path = log_path
        self.hub_port = self.cdn_port = 0
        self.host = "127.0.0.1"
        self.direct_lfs = False
        self.xet = True
        self.cas_port = 0

    def log(self, **entry):
        if self.log_path:
            with LOCK, open(self.log_path, "a") as f:
                f.write(json.dumps(entry) + "\n")


STATE = None


def parse_range(header, size):
    """(start, end inclusive) or None for the whole body; 'invalid' when unsatisfiable."""
    if not header or not header.startswith("bytes="):
        return None
    first, _, last = header[6:].split(",")[0].partition("-")
    if first == "":
        n = int(last)
        return (max(0, size - n), size - 1) if n > 0 else "invalid"
    start = int(first)
    end = min(int(last), size - 1) if last else size - 1
    return (start, end) if start < size and start <= end else "invalid"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_name = "hub"

    def log_message(self, *args):
        pass

    def record(self):
        STATE.log(server=self.server_name, method=self.command, path=self.path,
                  range=self.headers.get("Range"), auth=bool(self.headers.get("Authorization")),
                  ua=self.headers.get("User-Agent", ""), headers=dict(self.headers.items()))

    def send(self, code, body=b"", headers=None, head=False):
        self.send_response(code)
        headers = dict(headers or {})
        headers.setdefault("Content-Length", str(len(body)))
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()
        if not head and body:
            self.wfile.write(body)

    def error(self, code, kind, message, head=False):
        self.send(code, json.dumps({"error": message}).encode(),
                  {"Content-Type": "application/json", "X-Error-Code": kind,
                   "X-Error-Message": message}, head)

    def send_bytes(self, data, headers, head):
        r = parse_range(self.headers.get("Range"), len(data))
        if r == "invalid":
            return self.send(416, b"", {"Content-Range": f"bytes */{len(data)}"}, head)
        headers = dict(headers, **{"Accept-Ranges": "bytes"})
        if r is None:
            return self.send(200, data, headers, head)
        start, end = r
        headers["Content-Range"] = f"bytes {start}-{end}/{len(data)}"
        return self.send(206, data[start:end + 1], headers, head)


class HubHandler(Handler):
    server_name = "hub"

    def do_HEAD(self):
        self.handle_request(head=True)

    def do_GET(self):
        self.handle_request(head=False)

    def do_POST(self):
        self.record()
        url = urllib.parse.urlsplit(self.path)
        if url.path == "/__control":
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            with LOCK:
                FAULTS.update(body)
            return self.send(200, b"{}")
        length = int(self.headers.get("Content-Length", 0))
        body = self.rfile.read(length).decode()
        parts = url.path.split("/")
        # /api/{type}s/{org}/{name}/paths-info/{rev}
        if len(parts) >= 7 and parts[1] == "api" and parts[5] == "paths-info":
            repo, rev = f"{parts[2]}/{parts[3]}/{parts[4]}", "/".join(parts[6:])
            found = self.find(repo, rev, False)
            if found is None:
                return
            commit, files = found
            if self.headers.get("Content-Type", "").startswith("application/json"):
                req = json.loads(body or "{}")
                paths, expand = req.get("paths", []), bool(req.get("expand"))
            else:
                form = urllib.parse.parse_qs(body)
                paths, expand = form.get("paths", []), form.get("expand", ["false"])[0] == "true"
            out = [self.entry(p, files[p], commit if expand else None) for p in paths if p in files]
            return self.send(200, json.dumps(out).encode(), {"Content-Type": "application/json"})
        return self.error(404, "EntryNotFound", "no such endpoint")

    def find(self, repo, rev, head, public=False):
        """(commit, files) or None after answering with the error. `public`: a gated repo's
        information, which the Hub shows to anyone."""
        repo = repo.replace("models/org/old-name", "models/org/tiny-model")
        r = STATE.repos.get(repo)
        if r is None:
            self.error(401, "RepoNotFound", f"Repository Not Found for url: {self.path}", head)
            return None
        if r.get("gated") and not public and self.headers.get("Authorization") != "Bearer hf_granted":
            self.error(401, "GatedRepo", f"Access to model {repo} is restricted", head)
            return None
        rev = urllib.parse.unquote(rev)
        commit = r["refs"].get(rev, rev)
        if commit not in r["commits"]:
            self.error(404, "RevisionNotFound", f"Invalid rev id: {rev}", head)
            return None
        return commit, r["commits"][commit]

    @staticmethod
    def entry(path, data, commit=None):
        """A tree / paths-info entry; with `commit` (expand=true) also lastCommit and
        securityFileStatus, as the Hub adds them."""
        e = {"type": "file", "oid": git_blob_sha1(data), "size": len(data), "path": path}
        if is_lfs(data):
            e["lfs"] = {"oid": sha256_hex(data), "size": len(data),
                        "pointerSize": 134}
            if STATE.xet:
                e["xetHash"] = xet_hash(data)
        if commit:
            e["lastCommit"] = {"id": commit, "title": "Upload", "date": "2026-01-01T00:00:00.000Z"}
            e["securityFileStatus"] = {"status": "safe"}
        return e

    def handle_request(self, head):
        self.record()
        url = urllib.parse.urlsplit(self.path)
        parts = [urllib.parse.unquote(p) for p in url.path.split("/")[1:]]
        if parts and parts[0] == "api":
            return self.api(parts[1:], url, head)
        kind = "datasets" if parts and parts[0] == "datasets" else "models"
        if kind == "datasets":
            parts = parts[1:]
        if len(parts) < 5 or parts[2] != "resolve":
            return self.error(404, "EntryNotFound", "not found", head)
        repo, rev, path = f"{kind}/{parts[0]}/{parts[1]}", parts[3], "/".join(parts[4:])
        if repo == "models/org/old-name":
            # Renamed: a relative redirect, as the Hub answers.
            return self.send(307, b"", {"Location": url.path.replace("/org/old-name/", "/org/tiny-model/")}, head)
        found = self.find(repo, rev, head)
        if found is None:
            return
        commit, files = found
        claimed = STATE.repos[repo].get("claims", {}).get(path)
        if claimed is not None:
            # Metadata naming another repo's object; its bytes are not served through this repo.
            if not head:
                return self.error(403, "AccessDenied", f"{path} of {repo} is not available")
            sha = sha256_hex(claimed)
            return self.send(302, b"", {"X-Repo-Commit": commit, "ETag": f'"{sha}"',
                                        "X-Linked-Etag": f'"{sha}"',
                                        "X-Linked-Size": str(len(claimed)),
                                        "Location": f"http://{STATE.host}:{STATE.cdn_port}/denied"},
                             head)
        if path not in files:
            return self.error(404, "EntryNotFound", f"{path} does not exist at {rev}", head)
        data = files[path]
        headers = {"X-Repo-Commit": commit, "ETag": f'"{git_blob_sha1(data)}"'}
        if not is_lfs(data):
            loc = f"/api/resolve-cache/{repo}/{commit}/{urllib.parse.quote(path)}"
            return self.send(307, b"", dict(headers, Location=loc), head)
        sha = sha256_hex(data)
        if STATE.direct_lfs:
            headers.update({"X-Linked-Etag": f'"{sha}"', "X-Linked-Size": str(len(data)),
                            "ETag": f'"{sha}"', "Content-Type": "application/octet-stream"})
            return self.send_bytes(data, headers, head)
        expires = int(time.time()) + 60
        sig = hmac.new(SECRET, f"{sha}:{expires}".encode(), "sha256").hexdigest()
        headers.update({"X-Linked-Etag": f'"{sha}"', "X-Linked-Size": str(len(data)),
                        "ETag": f'"{sha}"',
                        "Location": f"http://{STATE.host}:{STATE.cdn_port}/repos/{sha[:2]}/{sha}"
                                    f"?Expires={expires}&Signature={sig}"})
        if STATE.xet:
            xh = xet_hash(data)
            headers.update({"X-Xet-Hash": xh,
                            "X-Xet-Refresh-Route": f"/api/{repo}/xet-read-token/{commit}",
                            "Link": f'<http://{STATE.host}:{STATE.hub_port}/api/{repo}/xet-read-token/'
                                    f'{commit}>; rel="xet-auth", <http://{STATE.host}:{STATE.cas_port}'
                                    f'/v1/reconstructions/{xh}>; rel="xet-reconstruction-info"'})
            if not head and "application/vnd.xet-fileinfo+json" in self.headers.get("Accept", ""):
                # @huggingface/hub's Xet switch: the file's Xet info instead of a redirect.
                info = {"hash": xh, "etag": sha, "size": len(data),
                        "refreshUrl": f"http://{STATE.host}:{STATE.hub_port}/api/{repo}/xet-read-token/{commit}",
                        "reconstructionUrl": f"http://{STATE.host}:{STATE.cas_port}/v1/reconstructions/{xh}"}
                del headers["Location"]
                headers["Content-Type"] = "application/vnd.xet-fileinfo+json"
                return self.send(200, json.dumps(info).encode(), headers)
        return self.send(302, b"", headers, head)

    def api(self, parts, url, head):
        # resolve-cache/{type}/{org}/{name}/{commit}/{path}
        if parts and parts[0] == "resolve-cache":
            repo = f"{parts[1]}/{parts[2]}/{parts[3]}"
            found = self.find(repo, parts[4], head)
            if found is None:
                return
            commit, files = found
            path = "/".join(parts[5:])
            if path not in files:
                return self.error(404, "EntryNotFound", f"{path} does not exist", head)
            data = files[path]
            return self.send_bytes(data, {"X-Repo-Commit": commit, "ETag": f'"{git_blob_sha1(data)}"',
                                          "Content-Type": "application/octet-stream"}, head)
        if len(parts) < 3 or parts[0] not in ("models", "datasets"):
            return self.error(404, "EntryNotFound", "no such endpoint", head)
        repo = f"{parts[0]}/{parts[1]}/{parts[2]}"
        rest = parts[3:]
        if repo == "models/org/old-name":
            return self.send(307, b"", {"Location": url.path.replace("/org/old-name", "/org/tiny-model")}, head)
        rev = "main"
        if rest[:1] in (["xet-read-token"], ["xet-write-token"]):
            found = self.find(repo, rest[1] if len(rest) > 1 else "main", head)
            if found is None:
                return
            exp = int(time.time()) + 3600
            cas = f"http://{STATE.host}:{STATE.cas_port}"
            token = {"accessToken": "xet_standin_token", "exp": exp, "casUrl": cas}
            return self.send(200, json.dumps(token).encode(),
                             {"Content-Type": "application/json", "X-Xet-Access-Token": token["accessToken"],
                              "X-Xet-Token-Expiration": str(exp), "X-Xet-Cas-Url": cas}, head)
        if rest[:1] == ["revision"]:
            rev = "/".join(rest[1:])
            rest = []
        if rest[:1] == ["tree"]:
            rev = rest[1] if len(rest) > 1 else "main"
        # As on the Hub, a gated repo's card (the info endpoint) is public; its files are not.
        found = self.find(repo, rev, head, public=not rest)
        if found is None:
            return
        commit, files = found
        if not rest:
            info = {"id": repo.split("/", 1)[1], "sha": commit, "private": False,
                    "gated": bool(STATE.repos[repo].get("gated")),
                    "siblings": [{"rfilename": p} for p in sorted(files)]}
            if STATE.xet:
                info["xetEnabled"] = True
            return self.send(200, json.dumps(info).encode(), {"Content-Type": "application/json"}, head)
        # tree/{rev}[/{path}]?recursive=true&cursor=N
        base = "/".join(rest[2:])
        query = urllib.parse.parse_qs(url.query)
        recursive = query.get("recursive", ["false"])[0] == "true"
        entries, dirs = [], set()
        for p in sorted(files):
            if base and not p.startswith(base + "/"):
                continue
            rel = p[len(base) + 1:] if base else p
            if "/" in rel and not recursive:
                d = (base + "/" if base else "") + rel.split("/")[0]
                if d not in dirs:
                    dirs.add(d)
                    entries.append({"type": "directory", "oid": "0" * 40, "size": 0, "path": d})
                continue
            entries.append(self.entry(p, files[p], commit if query.get("expand") == ["true"] else None))
        cursor = int(query.get("cursor", ["0"])[0])
        page = entries[cursor:cursor + 2]
        headers = {"Content-Type": "application/json"}
        if cursor + 2 < len(entries):
            q = dict((k, v[0]) for k, v in query.items())
            q["cursor"] = str(cursor + 2)
            headers["Link"] = (f'<http://{STATE.host}:{STATE.hub_port}{url.path}?'
                               f'{urllib.parse.urlencode(q)}>; rel="next"')
        return self.send(200, json.dumps(page).encode(), headers, head)


class CdnHandler(Handler):
    server_name = "cdn"

    def do_HEAD(self):
        self.serve(head=True)

    def do_GET(self):
        self.serve(head=False)

    def serve(self, head):
        self.record()
        url = urllib.parse.urlsplit(self.path)
        q = urllib.parse.parse_qs(url.query)
        sha = url.path.rsplit("/", 1)[-1]
        expires = q.get("Expires", ["0"])[0]
        want = hmac.new(SECRET, f"{sha}:{expires}".encode(), "sha256").hexdigest()
        if not hmac.compare_digest(q.get("Signature", [""])[0], want) or int(expires) < time.time():
            return self.send(403, b"<Error><Code>AccessDenied</Code></Error>", {}, head)
        data = STATE.blobs.get(sha)
        if data is None:
            return self.send(404, b"<Error><Code>NoSuchKey</Code></Error>", {}, head)
        fault = None
        if not head:
            with LOCK:
                if FAULTS.get("cdn") and FAULTS.get("times", 0) > 0:
                    fault = FAULTS["cdn"]
                    FAULTS["times"] -= 1
        if fault == "503":
            return self.send(503, b"<Error><Code>SlowDown</Code></Error>", {"Retry-After": "1"})
        if fault in ("truncate", "corrupt", "stall"):
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("ETag", f'"{sha}"')
            self.end_headers()
            half = len(data) // 2
            if fault == "corrupt":
                self.wfile.write(data[:half] + bytes([data[half] ^ 1]) + data[half + 1:])
                return
            self.wfile.write(data[:half])
            self.wfile.flush()
            if fault == "stall":
                time.sleep(3600)
            self.close_connection = True
            return
        return self.send_bytes(data, {"ETag": f'"{sha}"', "Content-Type": "application/octet-stream"}, head)


class CasHandler(Handler):
    """The Xet CAS: every request is logged; nothing is served (a client that gets here has gone
    around the cache)."""
    server_name = "cas"

    def do_GET(self):
        self.record()
        self.send(404, b'{"error": "the stand-in CAS serves nothing"}', {"Content-Type": "application/json"})

    do_HEAD = do_POST = do_GET


def main():
    global STATE
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--cdn-port-file", required=True)
    ap.add_argument("--log")
    ap.add_argument("--lfs-size", type=int, default=3 << 20)
    ap.add_argument("--lifetime", type=float, default=600)
    ap.add_argument("--direct-lfs", action="store_true",
                    help="the Hub answers LFS resolve with 200 and the bytes, not 302 to the CDN")
    ap.add_argument("--host", default="127.0.0.1", help="address to listen on and put in URLs")
    ap.add_argument("--no-xet", action="store_true", help="advertise no Xet (the Hub before 2025)")
    a = ap.parse_args()
    STATE = State(a.lfs_size, a.log)
    STATE.host, STATE.direct_lfs, STATE.xet = a.host, a.direct_lfs, not a.no_xet
    cdn = ThreadingHTTPServer((a.host, 0), CdnHandler)
    hub = ThreadingHTTPServer((a.host, 0), HubHandler)
    cas = ThreadingHTTPServer((a.host, 0), CasHandler)
    cdn.daemon_threads = hub.daemon_threads = cas.daemon_threads = True
    # A listen backlog of 5 (the default) drops the SYNs of 16 clients arriving at once.
    for server in (cdn, hub, cas):
        server.socket.listen(128)
    STATE.cdn_port, STATE.hub_port = cdn.server_address[1], hub.server_address[1]
    STATE.cas_port = cas.server_address[1]
    for server in (cdn, hub, cas):
        threading.Thread(target=server.serve_forever, daemon=True).start()
    with open(a.cdn_port_file, "w") as f:
        f.write(str(STATE.cdn_port))
    with open(a.port_file, "w") as f:
        f.write(str(STATE.hub_port))
    time.sleep(a.lifetime)


if __name__ == "__main__":
    main()
