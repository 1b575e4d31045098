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


def main():
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
