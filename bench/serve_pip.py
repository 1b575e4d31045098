#!/usr/bin/env python3
"""`pip install` of a requirements set through `ferry serve`'s /pypi, first and second machine,
with the index behind a shaped link (issue 13; results in docs/benchmarks.md).

  /usr/bin/python3 bench/serve_pip.py [--wheels 30] [--rate 300mbit] [--repeats 1] [--json]

Builds --wheels pure-Python wheels of 1-5 MB (random, stored uncompressed: no zip gain) and a
PEP 503 index (#sha256= links) served by nginx inside a network namespace, behind a veth pair
with `tbf rate RATE` on the namespace's egress (as bench/serve_cache.py's scenario 5). Then, each
into a fresh venv made beforehand (Debian pip 23.0.1, `--no-cache-dir`):
  - straight from the index (no cache),
  - first machine through `ferry serve --pypi-upstream` (cold cache),
  - second machine through the same ferry (warm).
Upstream requests come from nginx's access log. The namespace is removed at the end, always.
Needs root, nginx, /usr/bin/python3 with venv. Speed is reported, never asserted.
"""
import argparse
import base64
import datetime
import hashlib
import io
import json
import os
import pathlib
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from benchlib import ferry_binary  # noqa: E402
from serve_cache import NS, NS_IP, netns_down, netns_up, stop, wait_for, hwm_kib  # noqa: E402

NGINX_CONF = """
daemon off;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
user root;
worker_processes 1;
events {{ worker_connections 256; }}
http {{
  log_format bench '$request_method $request_uri $status $body_bytes_sent';
  access_log {dir}/access.log bench;
  sendfile on;
  client_body_temp_path {dir}/tmp/body;
  proxy_temp_path {dir}/tmp/proxy;
  fastcgi_temp_path {dir}/tmp/fastcgi;
  uwsgi_temp_path {dir}/tmp/uwsgi;
  scgi_temp_path {dir}/tmp/scgi;
  map $http_accept $simple_index {{
    default index.html;
    "~application/vnd\\.pypi\\.simple\\.v1\\+json" {json_index};
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
    location /files/ {{ types {{ application/octet-stream whl; }} }}
  }}
}}
"""


def wheel(name, version, payload):
    dist = name.replace("-", "_")
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n\n".encode()
    files = {f"{dist}/__init__.py": f'VERSION = "{version}"\n'.encode(),
             f"{dist}/data.bin": payload,
             f"{dist}-{version}.dist-info/METADATA": meta,
             f"{dist}-{version}.dist-info/WHEEL":
                 b"Wheel-Version: 1.0\nGenerator: ferry-bench\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
             f"{dist}-{version}.dist-info/top_level.txt": f"{dist}\n".encode()}
    record = [f"{p},sha256={base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b'=').decode()},{len(d)}"
              for p, d in files.items()] + [f"{dist}-{version}.dist-info/RECORD,,"]
    files[f"{dist}-{version}.dist-info/RECORD"] = ("\n".join(record) + "\n").encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        for p, d in files.items():
            z.writestr(zipfile.ZipInfo(p, date_time=(2026, 1, 1, 0, 0, 0)), d)
    return f"{dist}-{version}-py3-none-any.whl", buf.getvalue()


def build_index(www, n):
    rnd = random.Random(13)
    names, total = [], 0
    for i in range(n):
        name = f"ferrybench-pkg{i:02d}"
        fname, data = wheel(name, "1.0", rnd.randbytes(rnd.randint(1_000_000, 5_000_000)))
        total += len(data)
        (www / "files" / name).mkdir(parents=True)
        (www / "files" / name / fname).write_bytes(data)
        page = www / "simple" / name
        page.mkdir(parents=True)
        sha = hashlib.sha256(data).hexdigest()
        page.joinpath("index.html").write_text(
            f"<!DOCTYPE html>\n<html><body>\n<a href=\"/files/{name}/{fname}#sha256={sha}\">{fname}</a><br/>\n"
            "</body></html>\n")
        # PEP 691 JSON with PEP 700 sizes, as pypi.org serves it (used with --json).
        page.joinpath("index.json").write_text(json.dumps({
            "meta": {"api-version": "1.1"}, "name": name, "versions": ["1.0"],
            "files": [{"filename": fname, "url": f"/files/{name}/{fname}", "hashes": {"sha256": sha},
                       "size": len(data), "yanked": False, "core-metadata": False}]}))
        names.append(name)
    (www / "simple" / "index.html").write_text(
        "<!DOCTYPE html>\n<html><body>\n" + "\n".join(f'<a href="/simple/{x}/">{x}</a>' for x in names)
        + "\n</body></html>\n")
    return names, total


def pip_install(venv, index, req):
    env = {"PATH": f"{venv}/bin:/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root"),
           "PIP_FIND_LINKS": "", "PIP_CONFIG_FILE": "/dev/null", "PIP_NO_INPUT": "1"}
    start = time.perf_counter()
    p = subprocess.run([f"{venv}/bin/pip", "install", "--no-cache-dir", "--disable-pip-version-check",
                        "--index-url", index, "--trusted-host", index.split("/")[2].split(":")[0], "-r", str(req)], env=env, capture_output=True, text=True)
    secs = time.perf_counter() - start
    if p.returncode != 0:
        raise RuntimeError(f"pip install from {index}: {p.stdout[-1500:]}{p.stderr[-1500:]}")
    return secs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wheels", type=int, default=30)
    ap.add_argument("--rate", default="300mbit")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--work", default="/var/tmp")
    ap.add_argument("--json", action="store_true",
                    help="the index also answers PEP 691 JSON with PEP 700 sizes, as pypi.org does "
                         "(default: PEP 503 HTML only, so the proxy learns each size by a HEAD)")
    a = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    print(f"# {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; {ferry_binary()}; "
          f"{subprocess.run(['nginx', '-v'], capture_output=True, text=True).stderr.strip()}")
    work = pathlib.Path(tempfile.mkdtemp(prefix="ferry-pip-bench-", dir=a.work))
    nginx = ferry = None
    runs = {"direct": [], "first": [], "second": []}
    ups = {"first": [], "second": []}
    rss = 0.0
    breakdown = {}
    try:
        names, total = build_index(work / "www", a.wheels)
        req = work / "req.txt"
        req.write_text("".join(f"{x}==1.0\n" for x in names))
        (work / "tmp").mkdir()
        port = 8731
        (work / "nginx.conf").write_text(NGINX_CONF.format(dir=work, host=NS_IP, port=port,
                                                          json_index="index.json" if a.json else "index.html"))
        netns_up(a.rate)
        nginx = subprocess.Popen(["ip", "netns", "exec", NS, "nginx", "-p", str(work), "-c",
                                  str(work / "nginx.conf")], stdout=subprocess.DEVNULL,
                                 stderr=open(work / "nginx.err", "w"), start_new_session=True)
        index = f"http://{NS_IP}:{port}/simple/"
        wait_for(lambda: subprocess.run(["curl", "-sf", "-o", "/dev/null", index]).returncode == 0, "nginx")
        log = work / "access.log"

        def upstream_lines():
            return log.read_text().splitlines() if log.exists() else []

        for rep in range(a.repeats):
            venvs = {k: work / f"venv-{k}-{rep}" for k in runs}
            for v in venvs.values():
                subprocess.run(["/usr/bin/python3", "-m", "venv", str(v)], check=True)
            runs["direct"].append(pip_install(venvs["direct"], index, req))
            data = work / f"ferry-{rep}"
            (data / "spool").mkdir(parents=True)
            err = data / "serve.log"
            ferry = subprocess.Popen(
                [ferry_binary(), "serve", "--data", str(data / "data"), "--listen", "127.0.0.1:0",
                 "--pypi-upstream", index, "--spool-dir", str(data / "spool")],
                stdout=subprocess.DEVNULL, stderr=open(err, "w"), start_new_session=True)
            base = wait_for(lambda: re.search(r"listening on (http://127\.0\.0\.1:\d+)", err.read_text()),
                            "ferry serve").group(1)
            via = f"{base}/pypi/simple/"
            for k in ("first", "second"):
                mark = len(upstream_lines())
                runs[k].append(pip_install(venvs[k], via, req))
                got = upstream_lines()[mark:]
                ups[k].append(len(got))
                if rep == 0 and got:
                    kinds = {}
                    for line in got:
                        method, uri, status = line.split()[:3]
                        what = "page" if uri.startswith("/simple/") else "wheel" if ".whl" in uri else "other"
                        kinds[f"{method} {what} {status}"] = kinds.get(f"{method} {what} {status}", 0) + 1
                    breakdown[k] = kinds
            rss = max(rss, hwm_kib(ferry.pid) / 1024)
            stop(ferry)
            ferry = None
    finally:
        stop(ferry)
        if nginx is not None:
            stop(nginx)
        netns_down()
        shutil.rmtree(work, ignore_errors=True)

    def med(k):
        return statistics.median(runs[k])

    kind = "PEP 691 JSON with sizes" if a.json else "PEP 503 HTML only"
    print(f"\n### pip install of {a.wheels} wheels ({total / 1e6:.0f} MB) into a fresh venv, index ({kind}) behind tbf {a.rate}")
    print("| run | median s | runs | upstream requests |\n|---|---:|---|---|")
    print(f"| straight from the index (no cache) | {med('direct'):.2f} | {[round(x, 2) for x in runs['direct']]} | all |")
    print(f"| first machine via ferry (cold) | {med('first'):.2f} | {[round(x, 2) for x in runs['first']]} | {ups['first']} |")
    print(f"| second machine via ferry (warm) | {med('second'):.2f} | {[round(x, 2) for x in runs['second']]} | {ups['second']} |")
    for k, kinds in breakdown.items():
        print(f"upstream requests, {k} machine: " + ", ".join(f"{v} {n}" for n, v in sorted(kinds.items())))
    print(f"\nSecond machine vs first: **{med('first') / med('second'):.2f}x**; first vs no cache: "
          f"{(med('first') / med('direct') - 1) * 100:+.0f}%; ferry peak RSS {rss:.0f} MiB.")


if __name__ == "__main__":
    main()
