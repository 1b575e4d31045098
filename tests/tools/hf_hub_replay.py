#!/usr/bin/env python3
"""Replays huggingface_hub's download of one file (`hf_hub_download`, file_download.py of the
0.2x series), which cannot be pip-installed here, so tests can check `ferry serve`'s /hf against
the exact requests that library makes:

  1. HEAD {endpoint}/{repo}/resolve/{revision}/{path} with `Accept-Encoding: identity` (and
     `Authorization: Bearer` when a token is given), following *relative* redirects only
     (`_request_wrapper(follow_relative_redirects=True)`); an absolute redirect is not followed,
     its Location becomes the download URL;
  2. reads X-Repo-Commit, X-Linked-Etag else ETag (W/ and quotes stripped), X-Linked-Size else
     Content-Length; a missing one is an error;
  3. if blobs/{etag} exists: done. Otherwise GET the download URL (all redirects followed) into
     blobs/{etag}.incomplete, with `Range: bytes=N-` when N bytes are already there (resume);
  4. checks the final size equals the expected size ("Consistency check failed"), renames the
     file into place, links snapshots/{commit}/{path}.

  hf_hub_replay.py ENDPOINT REPO REVISION PATH CACHE_DIR [--token T] [--stop-after BYTES]

--stop-after leaves a partial .incomplete file and exits 3 (an interrupted download).
Prints one JSON line: {"commit", "etag", "size", "sha256", "path", "resumed_from", "head_status"}.

  hf_hub_replay.py snapshot ENDPOINT REPO REVISION CACHE_DIR [--token T]

replays huggingface_hub 1.x's `snapshot_download` with `hf_xet` installed (its default on x86-64
and arm64; HF_HUB_DISABLE_XET=1 turns Xet off, as in the library), read from
_snapshot_download.py, file_download.py and utils/_xet.py of huggingface_hub 1.29:

  1. GET {endpoint}/api/{kind}s/{repo}/revision/{rev} (repo_info) for the commit id `sha`;
  2. the tree listing: {cache}/{kind}s--{org}--{name}/trees/{commit}.json when it is there (the
     tree cache: a commit's listing is kept for good), else GET .../tree/{commit}?recursive=true&
     expand=false, following `Link: rel="next"`, written to that file with each file's size,
     blob_id (oid), lfs_sha256/lfs_size and xet_hash (`xetHash`);
  3. per file, hf_hub_download at the commit: done if snapshots/{commit}/{path} exists; else the
     Xet decision *before any HEAD* (`_xet_file_metadata_from_tree_cache`): a tree entry with a
     64-hex xet_hash and LFS metadata goes to Xet; else the HEAD above, and a HEAD answer with
     X-Xet-Hash goes to Xet (`parse_xet_file_data_from_response`: the refresh route from
     `Link: rel="xet-auth"` else X-Xet-Refresh-Route); else the GET above into blobs/{etag};
  4. Xet (what hf_xet does first): GET the refresh route ({endpoint}/api/{kind}s/{repo}/
     xet-read-token/{commit}) with the Hub token, then the CAS at the casUrl it names. hf_xet
     cannot be installed here and this replay has no CAS client, so reaching step 4 is reported
     as an error with what it reached: the point is that through `ferry serve` nothing does.

Prints one JSON line: {"commit", "dir", "files": {path: sha256}, "xet": [paths that went to
Xet], "tree_cached": bool}; exits 4 when a file went to Xet.
"""
import argparse
import hashlib
import json
import os
import pathlib
import sys
import urllib.error
import urllib.parse
import urllib.request


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def head(url, headers):
    opener = urllib.request.build_opener(NoRedirect)
    for _ in range(10):
        req = urllib.request.Request(url, headers=headers, method="HEAD")
        try:
            r = opener.open(req, timeout=60)
        except urllib.error.HTTPError as e:
            r = e
        loc = r.headers.get("Location")
        if 300 <= r.status < 400 and loc and not urllib.parse.urlparse(loc).netloc:
            url = urllib.parse.urljoin(url, loc)  # relative: followed
            continue
        return r, url
    raise SystemExit("too many relative redirects")


def xet_enabled():
    return os.environ.get("HF_HUB_DISABLE_XET", "").upper() not in ("1", "ON", "YES", "TRUE")


def get_json(url, headers):
    """GET url (all redirects followed): (parsed JSON, the response's headers)."""
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=60) as r:
        return json.loads(r.read()), r.headers


def next_link(headers):
    for part in (headers.get("Link") or "").split(","):
        url, _, params = part.partition(";")
        if 'rel="next"' in params:
            return url.strip().strip("<>")
    return None


def xet_get(refresh_route, headers):
    """What hf_xet does first: the token, then the CAS. Returns what it reached (always an error
    here: there is no CAS client)."""
    reached = [refresh_route]
    try:
        token, _ = get_json(refresh_route, headers)
    except urllib.error.HTTPError as e:
        return reached, f"xet-read-token: HTTP {e.code} {e.headers.get('X-Error-Message', '')}"
    cas = token.get("casUrl")
    if cas:
        reached.append(cas)
        try:
            urllib.request.urlopen(urllib.request.Request(
                cas + "/v1/reconstructions/0", headers={"Authorization": f"Bearer {token.get('accessToken')}"}),
                timeout=60).read()
        except urllib.error.URLError:
            pass
    return reached, "went to the Xet CAS"


def download(url, headers, dest, size):
    """GET url (all redirects followed) into dest via a unique temporary file, size-checked."""
    tmp = dest.with_name(f"{dest.name}.{os.getpid()}.incomplete")
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=120) as resp, \
            open(tmp, "wb") as out:
        while chunk := resp.read(1 << 20):
            out.write(chunk)
    if tmp.stat().st_size != size:
        tmp.unlink()
        raise SystemExit(f"Consistency check failed: {url} should be {size} bytes")
    os.replace(tmp, dest)


def snapshot(argv):
    ap = argparse.ArgumentParser(prog="hf_hub_replay.py snapshot")
    for name in ("endpoint", "repo", "revision", "cache_dir"):
        ap.add_argument(name)
    ap.add_argument("--token")
    a = ap.parse_args(argv)
    kind, repo_id = ("dataset", a.repo[len("datasets/"):]) if a.repo.startswith("datasets/") else ("model", a.repo)
    headers = {"User-Agent": "huggingface_hub/1.29; replay"}
    if a.token:
        headers["Authorization"] = f"Bearer {a.token}"
    api = f"{a.endpoint}/api/{kind}s/{repo_id}"
    info, _ = get_json(f"{api}/revision/{urllib.parse.quote(a.revision, safe='')}", headers)
    commit = info["sha"]
    storage = pathlib.Path(a.cache_dir) / f"{kind}s--{repo_id.replace('/', '--')}"
    tree_file = storage / "trees" / f"{commit}.json"
    tree_cached = tree_file.exists()
    if tree_cached:
        entries = json.loads(tree_file.read_text())["files"]
    else:
        entries, url = {}, f"{api}/tree/{commit}?recursive=true&expand=false"
        while url:
            page, page_headers = get_json(url, headers)
            for f in page:
                if f["type"] == "file":
                    lfs = f.get("lfs") or {}
                    entries[f["path"]] = {k: v for k, v in (
                        ("size", f["size"]), ("blob_id", f["oid"]), ("lfs_sha256", lfs.get("oid")),
                        ("lfs_size", lfs.get("size")), ("xet_hash", f.get("xetHash"))) if v is not None}
            url = next_link(page_headers)
        tree_file.parent.mkdir(parents=True, exist_ok=True)
        tree_file.write_text(json.dumps({"format_version": 1, "files": entries}))
    if a.revision != commit:
        (storage / "refs").mkdir(parents=True, exist_ok=True)
        (storage / "refs" / a.revision).write_text(commit)
    files, went_to_xet, errors = {}, [], []
    for path, entry in sorted(entries.items()):
        pointer = storage / "snapshots" / commit / path
        if not pointer.exists():
            refresh = None
            xh = entry.get("xet_hash") or ""
            if (xet_enabled() and len(xh) == 64 and all(c in "0123456789abcdefABCDEF" for c in xh)
                    and "lfs_sha256" in entry):
                refresh = f"{api}/xet-read-token/{commit}"  # no HEAD at all
            else:
                url = f"{a.endpoint}/{'datasets/' if kind == 'dataset' else ''}{repo_id}/resolve/{commit}/{urllib.parse.quote(path)}"
                r, final = head(url, dict(headers, **{"Accept-Encoding": "identity"}))
                if r.status >= 400:
                    raise SystemExit(f"HEAD {url}: HTTP {r.status}")
                etag = (r.headers.get("X-Linked-Etag") or r.headers.get("ETag")).removeprefix("W/").strip('"')
                size = int(r.headers.get("X-Linked-Size") or r.headers.get("Content-Length"))
                if xet_enabled() and r.headers.get("X-Xet-Hash"):
                    links = dict((p.partition(";")[2].strip().removeprefix("rel=").strip('"'),
                                  p.partition(";")[0].strip().strip("<>"))
                                 for p in (r.headers.get("Link") or "").split(",") if ";" in p)
                    refresh = links.get("xet-auth") or urllib.parse.urljoin(final, r.headers.get("X-Xet-Refresh-Route", ""))
                else:
                    location = r.headers.get("Location") if 300 <= r.status < 400 else None
                    get_headers = dict(headers)
                    if location and urllib.parse.urlparse(location).netloc != urllib.parse.urlparse(url).netloc:
                        get_headers.pop("Authorization", None)  # a CDN URL is signed
                    blob = storage / "blobs" / etag
                    blob.parent.mkdir(parents=True, exist_ok=True)
                    if not blob.exists():
                        download(location or final, get_headers, blob, size)
                    pointer.parent.mkdir(parents=True, exist_ok=True)
                    pointer.symlink_to(os.path.relpath(blob, pointer.parent))
            if refresh:
                reached, why = xet_get(refresh, headers)
                went_to_xet.append(path)
                errors.append(f"{path}: {why} (reached {', '.join(reached)})")
                continue
        files[path] = hashlib.sha256(pointer.read_bytes()).hexdigest()
    print(json.dumps({"commit": commit, "dir": str(storage / "snapshots" / commit), "files": files,
                      "xet": went_to_xet, "tree_cached": tree_cached, "errors": errors}))
    return 4 if went_to_xet else 0


def main():
    if sys.argv[1:2] == ["snapshot"]:
        return snapshot(sys.argv[2:])
    ap = argparse.ArgumentParser()
    for name in ("endpoint", "repo", "revision", "path", "cache_dir"):
        ap.add_argument(name)
    ap.add_argument("--token")
    ap.add_argument("--stop-after", type=int)
    a = ap.parse_args()
    headers = {"Accept-Encoding": "identity", "User-Agent": "huggingface_hub/0.26; replay"}
    if a.token:
        headers["Authorization"] = f"Bearer {a.token}"
    url = f"{a.endpoint}/{a.repo}/resolve/{urllib.parse.quote(a.revision, safe='')}/{urllib.parse.quote(a.path)}"
    r, url = head(url, headers)
    if r.status >= 400:
        print(json.dumps({"head_status": r.status, "error_code": r.headers.get("X-Error-Code")}))
        return 2
    commit = r.headers.get("X-Repo-Commit")
    etag = r.headers.get("X-Linked-Etag") or r.headers.get("ETag")
    size = r.headers.get("X-Linked-Size") or r.headers.get("Content-Length")
    if not commit or not etag or size is None:
        raise SystemExit("Distant resource does not seem to be on huggingface.co (missing headers)")
    etag = etag.removeprefix("W/").strip('"')
    size = int(size)
    download_url = r.headers["Location"] if 300 <= r.status < 400 else url
    cache = pathlib.Path(a.cache_dir)
    blob = cache / "blobs" / etag
    blob.parent.mkdir(parents=True, exist_ok=True)
    resumed_from = None
    if not blob.exists():
        partial = blob.with_name(etag + ".incomplete")
        have = partial.stat().st_size if partial.exists() else 0
        get_headers = dict(headers)
        if have:
            get_headers["Range"] = f"bytes={have}-"
            resumed_from = have
        req = urllib.request.Request(download_url, headers=get_headers)
        with urllib.request.urlopen(req, timeout=120) as resp, open(partial, "ab") as out:
            if have and resp.status != 206:
                raise SystemExit(f"resume got HTTP {resp.status}, not 206")
            while True:
                chunk = resp.read(1 << 20)
                if not chunk:
                    break
                if a.stop_after is not None and out.tell() + len(chunk) >= a.stop_after:
                    out.write(chunk[: a.stop_after - out.tell()])
                    return 3
                out.write(chunk)
        if partial.stat().st_size != size:
            raise SystemExit(f"Consistency check failed: file should be of size {size} but has "
                             f"size {partial.stat().st_size}")
        os.replace(partial, blob)
    link = cache / "snapshots" / commit / a.path
    link.parent.mkdir(parents=True, exist_ok=True)
    if not link.exists():
        link.symlink_to(os.path.relpath(blob, link.parent))
    sha = hashlib.sha256(blob.read_bytes()).hexdigest()
    print(json.dumps({"commit": commit, "etag": etag, "size": size, "sha256": sha,
                      "path": str(link), "resumed_from": resumed_from, "head_status": r.status}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
