#!/usr/bin/env python3
"""A local PyPI stand-in served by nginx, for testing `ferry serve`'s /pypi proxy with real pip.

  tests/tools/pypi_standin.py start DIR [--big-wheel BYTES]
                                            builds the indexes under DIR, starts nginx; DIR/env
                                            holds PYPI_STANDIN_URL=http://127.0.0.1:PORT/simple/
                                            and TORCH_STANDIN_URL=http://127.0.0.1:PORT/whl/cu124/
  tests/tools/pypi_standin.py stop DIR      stops it (by its pid file) and removes DIR
PYPI_STANDIN_HOST=ADDR: listen on ADDR and put it in the URLs instead of 127.0.0.1 (for a
`ferry serve` in a container, which reaches the host by one of its addresses).

What it serves (docs/semantics/pypi.md lists what clients rely on):
  /simple/                      the project list, PEP 503 HTML or PEP 691 JSON by `Accept`
  /simple/<name>/               a project page in both forms (`Vary: Accept`): file links with
                                #sha256=, data-requires-python (escaped), data-yanked,
                                data-dist-info-metadata and data-core-metadata in HTML, only
                                core-metadata in JSON (PEP 658/714, as PyPI does)
  /files/<name>/<file>          wheels built here (pure Python, real RECORD), Range supported
  /files/<name>/<file>.metadata their METADATA files (PEP 658)
Projects: ferrydemo-alpha 1.0, 1.1 (yanked), 2.0 (Requires-Python >=3.8, depends on
ferrydemo-beta>=0.2); ferrydemo-beta 0.1, 0.2; FerryDemo_Gamma 1.0 (a name to normalise).

And a PyTorch-style wheel index at /whl/cu124/, shaped like download.pytorch.org/whl/cu124/:
PEP 503 HTML only (no JSON, no .metadata), file links absolute to another path
(`/whl/cu124/ferrytorch-2.5.0%2Bcu124-py3-none-any.whl#sha256=...`, as PyTorch links
`/whl/cu124/torch-2.5.1%2Bcu124-...whl`), local version labels. Project ferrytorch:
2.5.0+cu124 (small), 2.4.0+cu124 (listed with a sha256 its bytes do not have: the file on disk
is DIR/www/whl/cu124/ferrytorch-2.4.0+cu124-py3-none-any.whl, its good bytes beside it with
.good appended, for a test to put in place), and with --big-wheel BYTES 2.5.1+cu124, one stored
file of BYTES (e.g. 2 GiB and more: zip64) generated here; each depends on ferrydemo-beta>=0.2,
which only the PyPI stand-in has (pip needs --extra-index-url).
nginx's access log (DIR/access.log: method, URI, Range, status) shows what reached upstream.
"""
import base64
import hashlib
import html
import io
import json
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import urllib.parse
import zipfile

PROJECTS = {
    "ferrydemo-alpha": [("1.0", {}), ("1.1", {"yanked": "broken build"}),
                        ("2.0", {"requires_python": ">=3.8", "requires": ["ferrydemo-beta>=0.2"]})],
    "ferrydemo-beta": [("0.1", {}), ("0.2", {})],
    "FerryDemo_Gamma": [("1.0", {})],
}


def normalize(name):
    import re
    return re.sub(r"[-_.]+", "-", name).lower()


def wheel_files(name, version, opts):
    """The files of a minimal pure-Python wheel, RECORD last: ({path: bytes}, METADATA, dist)."""
    dist = name.replace("-", "_")
    metadata = [f"Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    if "requires_python" in opts:
        metadata.append(f"Requires-Python: {opts['requires_python']}")
    metadata += [f"Requires-Dist: {r}" for r in opts.get("requires", [])]
    metadata = ("\n".join(metadata) + "\n\n").encode()
    files = {
        f"{dist.lower()}/__init__.py": f'VERSION = "{version}"\n'.encode(),
        f"{dist}-{version}.dist-info/METADATA": metadata,
        f"{dist}-{version}.dist-info/WHEEL":
            b"Wheel-Version: 1.0\nGenerator: ferry-standin\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        f"{dist}-{version}.dist-info/top_level.txt": f"{dist.lower()}\n".encode(),
    }
    return files, metadata, dist


def record_line(path, sha256_digest, size):
    digest = base64.urlsafe_b64encode(sha256_digest).rstrip(b"=").decode()
    return f"{path},sha256={digest},{size}"


def build_wheel(name, version, opts):
    """A minimal, valid pure-Python wheel: (filename, bytes, METADATA bytes)."""
    files, metadata, dist = wheel_files(name, version, opts)
    record = [record_line(path, hashlib.sha256(data).digest(), len(data)) for path, data in files.items()]
    record.append(f"{dist}-{version}.dist-info/RECORD,,")
    files[f"{dist}-{version}.dist-info/RECORD"] = ("\n".join(record) + "\n").encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for path, data in files.items():
            info = zipfile.ZipInfo(path, date_time=(2026, 1, 1, 0, 0, 0))
            z.writestr(info, data)
    return f"{dist}-{version}-py3-none-any.whl", buf.getvalue(), metadata


def build_big_wheel(path, name, version, size, opts):
    """A wheel of one stored (uncompressed) file of `size` bytes, written in 64 MiB pieces (zip64
    past 2 GiB); returns its sha256 hex."""
    files, _, dist = wheel_files(name, version, opts)
    piece = os.urandom(64 << 20)
    inner = f"{dist.lower()}/weights.bin"
    inner_sha = hashlib.sha256()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED, allowZip64=True) as z:
        info = zipfile.ZipInfo(inner, date_time=(2026, 1, 1, 0, 0, 0))
        with z.open(info, "w", force_zip64=True) as out:
            left = size
            while left:
                chunk = piece[:min(left, len(piece))]
                out.write(chunk)
                inner_sha.update(chunk)
                left -= len(chunk)
        record = [record_line(inner, inner_sha.digest(), size)]
        for p, data in files.items():
            z.writestr(zipfile.ZipInfo(p, date_time=(2026, 1, 1, 0, 0, 0)), data)
            record.append(record_line(p, hashlib.sha256(data).digest(), len(data)))
        record.append(f"{dist}-{version}.dist-info/RECORD,,")
        z.writestr(zipfile.ZipInfo(f"{dist}-{version}.dist-info/RECORD", date_time=(2026, 1, 1, 0, 0, 0)),
                   "\n".join(record) + "\n")
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(16 << 20):
            h.update(chunk)
    return h.hexdigest()


def build_torch(www, big_wheel):
    """The PyTorch-style index at /whl/cu124/ (see the module's doc)."""
    root = www / "whl" / "cu124"
    (root / "ferrytorch").mkdir(parents=True, exist_ok=True)
    opts = {"requires": ["ferrydemo-beta>=0.2"]}
    links = []
    for version in ("2.4.0+cu124", "2.5.0+cu124"):
        filename, wheel, _ = build_wheel("ferrytorch", version, opts)
        sha = hashlib.sha256(wheel).hexdigest()
        if version.startswith("2.4.0"):
            # Listed with the good sha256, served with one byte flipped until a test fixes it.
            (root / (filename + ".good")).write_bytes(wheel)
            wheel = wheel[:100] + bytes([wheel[100] ^ 1]) + wheel[101:]
        (root / filename).write_bytes(wheel)
        links.append((filename, sha))
    if big_wheel:
        filename = "ferrytorch-2.5.1+cu124-py3-none-any.whl"
        links.append((filename, build_big_wheel(root / filename, "ferrytorch", "2.5.1+cu124",
                                                big_wheel, opts)))
    body = "\n".join(f'<a href="/whl/cu124/{urllib.parse.quote(f)}#sha256={sha}">{html.escape(f)}</a><br/>'
                     for f, sha in links)
    (root / "ferrytorch" / "index.html").write_text(
        f"<!DOCTYPE html>\n<html>\n<body>\n<h1>Links for ferrytorch</h1>\n{body}\n</body>\n</html>\n")
    (root / "index.html").write_text(
        '<!DOCTYPE html>\n<html>\n<body>\n<a href="/whl/cu124/ferrytorch/">ferrytorch</a><br/>\n'
        "</body>\n</html>\n")


def build(www):
    simple = www / "simple"
    project_list = []
    for name, versions in PROJECTS.items():
        norm = normalize(name)
        project_list.append(name)
        files_dir = www / "files" / norm
        files_dir.mkdir(parents=True, exist_ok=True)
        entries = []
        for version, opts in versions:
            filename, wheel, metadata = build_wheel(name, version, opts)
            (files_dir / filename).write_bytes(wheel)
            (files_dir / (filename + ".metadata")).write_bytes(metadata)
            entries.append({"filename": filename, "url": f"/files/{norm}/{filename}",
                            "sha256": hashlib.sha256(wheel).hexdigest(), "size": len(wheel),
                            "metadata_sha256": hashlib.sha256(metadata).hexdigest(),
                            "requires_python": opts.get("requires_python"),
                            "yanked": opts.get("yanked"), "version": version})
        page = simple / norm
        page.mkdir(parents=True, exist_ok=True)
        links = []
        for e in entries:
            attrs = [f'href="{e["url"]}#sha256={e["sha256"]}"']
            if e["requires_python"]:
                attrs.append(f'data-requires-python="{html.escape(e["requires_python"])}"')
            if e["yanked"]:
                attrs.append(f'data-yanked="{html.escape(e["yanked"])}"')
            meta = f'sha256={e["metadata_sha256"]}'
            attrs += [f'data-dist-info-metadata="{meta}"', f'data-core-metadata="{meta}"']
            links.append(f'    <a {" ".join(attrs)}>{html.escape(e["filename"])}</a><br/>')
        (page / "index.html").write_text(
            "<!DOCTYPE html>\n<html>\n  <head>\n    <meta name=\"pypi:repository-version\" "
            f"content=\"1.1\">\n    <title>Links for {norm}</title>\n  </head>\n  <body>\n"
            f"    <h1>Links for {norm}</h1>\n" + "\n".join(links) + "\n  </body>\n</html>\n")
        (page / "index.json").write_text(json.dumps({
            "meta": {"api-version": "1.1"}, "name": norm,
            "versions": [e["version"] for e in entries],
            "files": [{"filename": e["filename"], "url": e["url"], "hashes": {"sha256": e["sha256"]},
                       "requires-python": e["requires_python"], "size": e["size"],
                       "yanked": e["yanked"] or False,
                       # PEP 714: only the new key in JSON (pip <= 23.1 fails hard on a
                       # `dist-info-metadata` dict, so PyPI never sends it); HTML has both.
                       "core-metadata": {"sha256": e["metadata_sha256"]}} for e in entries]}))
    simple.mkdir(parents=True, exist_ok=True)
    (simple / "index.html").write_text(
        "<!DOCTYPE html>\n<html><body>\n" + "\n".join(
            f'<a href="/simple/{normalize(n)}/">{html.escape(n)}</a>' for n in project_list) +
        "\n</body></html>\n")
    (simple / "index.json").write_text(json.dumps({
        "meta": {"api-version": "1.1"}, "projects": [{"name": n} for n in project_list]}))


NGINX_CONF = """\
daemon on;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
user root;
worker_processes 1;
events {{ worker_connections 256; }}
http {{
    log_format standin '$request_method $request_uri range=$http_range status=$status';
    access_log {dir}/access.log standin;
    client_body_temp_path {dir}/tmp/body;
    proxy_temp_path {dir}/tmp/proxy;
    fastcgi_temp_path {dir}/tmp/fastcgi;
    uwsgi_temp_path {dir}/tmp/uwsgi;
    scgi_temp_path {dir}/tmp/scgi;
    map $http_accept $simple_index {{
        default index.html;
        "~application/vnd\\.pypi\\.simple\\.v1\\+json" index.json;
    }}
    server {{
        listen {host}:{port};
        root {dir}/www;
        location /simple/ {{
            types {{ text/html html; application/vnd.pypi.simple.v1+json json; }}
            add_header Vary Accept;
            index $simple_index;
            try_files $uri/$simple_index $uri =404;
        }}
        location /files/ {{
            types {{ application/octet-stream whl; application/octet-stream metadata; }}
        }}
        location /whl/ {{
            types {{ text/html html; application/octet-stream whl; }}
            index index.html;
        }}
    }}
}}
"""


HOST = os.environ.get("PYPI_STANDIN_HOST", "127.0.0.1")


def free_port():
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def start(d, big_wheel=0):
    d = pathlib.Path(d).resolve()
    if (d / "nginx.pid").exists():
        print(f"pypi_standin: running, env in {d}/env")
        return
    (d / "tmp").mkdir(parents=True, exist_ok=True)
    build(d / "www")
    build_torch(d / "www", big_wheel)
    port = free_port()
    (d / "nginx.conf").write_text(NGINX_CONF.format(dir=d, host=HOST, port=port))
    subprocess.run(["nginx", "-c", str(d / "nginx.conf"), "-p", str(d)], check=True)
    (d / "env").write_text(f"PYPI_STANDIN_URL=http://{HOST}:{port}/simple/\n"
                           f"TORCH_STANDIN_URL=http://{HOST}:{port}/whl/cu124/\n")
    print(f"pypi_standin: nginx at http://{HOST}:{port}/simple/, env in {d}/env")


def stop(d):
    d = pathlib.Path(d)
    pid_file = d / "nginx.pid"
    if pid_file.exists():
        try:
            os.kill(int(pid_file.read_text().strip()), signal.SIGQUIT)
        except (ProcessLookupError, ValueError):
            pass
    shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    args = sys.argv[1:]
    big = 0
    if args[2:3] == ["--big-wheel"] and len(args) == 4 and args[0] == "start":
        big, args = int(args[3]), args[:2]
    if len(args) != 2 or args[0] not in ("start", "stop"):
        sys.exit(__doc__)
    start(args[1], big) if args[0] == "start" else stop(args[1])
