#!/usr/bin/env python3
"""`ferry serve` (/hf) against nginx proxy_cache + proxy_cache_lock, in one run, on the same data
from the same upstream (issue 13; results in docs/benchmarks.md).

  /usr/bin/python3 bench/serve_cache.py [--size-mib 1024] [--repeats 3] [--clients 16]
                                        [--netns-size-mib 2048] [--skip-netns]

Upstream: tests/tools/hf_standin.py --direct-lfs (the Hub answers LFS resolve with 200 and the
bytes itself: nginx cannot follow the Hub's 302 to the CDN inside a cache), model.safetensors of
--size-mib MiB. Both caches start empty for every cold run (a fresh process and cache dir), and
clients are curl (-o /dev/null). Scenarios:
  1. warm download of the file (rate);
  2. one cold client, against the same curl straight from the upstream (overhead);
  3. --clients concurrent cold clients of the file: upstream GETs of the file (from the stand-in's
     log), each client's time to first byte and total, all-done time vs one cold download;
     nginx also with its default 5 s proxy_cache_lock_timeout / proxy_cache_lock_age;
  4. peak RSS (VmHWM) of ferry and of nginx (master + workers) at the end of each scenario;
  5. the seed's scenario: the stand-in (default mode: 302 to its CDN) in a network namespace
     behind a veth pair with `tbf rate 300mbit` on its egress, ferry on the host; the real npm
     client (tests/tools/npm/hf_client.mjs snapshot) downloads the repo (--netns-size-mib MiB
     model + small files) on a first and a second "machine" (fresh client cache dirs), and once
     straight from the upstream. The namespace is removed at the end, always.
Needs root (nginx, ip netns, tc), nginx, curl, node. Speed is reported, never asserted.
"""
import argparse
import datetime
import json
import os
import pathlib
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from benchlib import ROOT, ferry_binary  # noqa: E402

FILE = "org/tiny-model/resolve/main/model.safetensors"
NS, VETH_HOST, VETH_NS = "ferrybench", "fb-host", "fb-ns"
HOST_IP, NS_IP = "10.213.7.1", "10.213.7.2"


def wait_for(pred, what, timeout=120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(0.05)
    raise RuntimeError(f"timed out waiting for {what}")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def hwm_kib(pid):
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def stop(proc):
    if proc and proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class Upstream:
    """hf_standin.py; `gets()` counts the GETs of the big file (Hub in --direct-lfs, else CDN)."""

    def __init__(self, work, size, direct=True, netns=None, host="127.0.0.1"):
        self.dir = pathlib.Path(work)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.log = self.dir / "hub.log"
        cmd = [sys.executable, str(ROOT / "tests/tools/hf_standin.py"), "--port-file", str(self.dir / "hub.port"),
               "--cdn-port-file", str(self.dir / "cdn.port"), "--log", str(self.log),
               "--lfs-size", str(size), "--lifetime", "7200", "--host", host]
        if direct:
            cmd.append("--direct-lfs")
        if netns:
            cmd = ["ip", "netns", "exec", netns] + cmd
        self.direct = direct
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=open(self.dir / "hub.err", "w"),
                                     start_new_session=True)
        port = wait_for(lambda: (self.dir / "hub.port").exists() and (self.dir / "hub.port").read_text(),
                        "the hub stand-in (it builds the blob first)", timeout=300)
        self.url = f"http://{host}:{port}"
        cdn = wait_for(lambda: (self.dir / "cdn.port").exists() and (self.dir / "cdn.port").read_text(),
                       "the CDN stand-in")
        # Its CDN is another origin: ferry serve follows redirects there only when allowed.
        self.cdn = f"{host}:{cdn}"

    def entries(self):
        if not self.log.exists():
            return []
        return [json.loads(x) for x in self.log.read_text().splitlines() if x]

    def file_gets(self, since=0):
        """GETs of the big file's bytes after log entry `since` (and the new mark)."""
        es = self.entries()
        n = 0
        for e in es[since:]:
            if e["method"] != "GET":
                continue
            if self.direct and e["server"] == "hub" and "/resolve/" in e["path"] and \
                    e["path"].split("?")[0].endswith("/model.safetensors"):
                n += 1
            elif not self.direct and e["server"] == "cdn":
                n += 1
        return n, len(es)

    def mark(self):
        return len(self.entries())

    def stop(self):
        stop(self.proc)


class Ferry:
    def __init__(self, work, upstream_url, name, allow=None):
        self.dir = pathlib.Path(work) / name
        (self.dir / "spool").mkdir(parents=True)
        self.err = self.dir / "serve.log"
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/root")}
        self.proc = subprocess.Popen(
            [ferry_binary(), "serve", "--data", str(self.dir / "data"), "--listen", "127.0.0.1:0",
             "--hf-upstream", upstream_url, "--spool-dir", str(self.dir / "spool"),
             *(["--upstream-allow", allow] if allow else [])],
            env=env, stdout=subprocess.DEVNULL, stderr=open(self.err, "w"), start_new_session=True)
        m = wait_for(lambda: re.search(r"listening on (http://127\.0\.0\.1:\d+)", self.err.read_text()),
                     f"ferry serve ({self.err})", timeout=30)
        self.base = m.group(1)
        self.url = f"{self.base}/hf/{FILE}"
        self.hf = f"{self.base}/hf"

    def rss_mib(self):
        return hwm_kib(self.proc.pid) / 1024

    def stop(self):
        stop(self.proc)
        shutil.rmtree(self.dir, ignore_errors=True)


NGINX_CONF = """
user root;
worker_processes {workers};
error_log {dir}/error.log warn;
pid {dir}/nginx.pid;
events {{ worker_connections 1024; }}
http {{
  access_log off;
  sendfile on;
  tcp_nopush on;
  client_body_temp_path {dir}/tmp/body;
  proxy_temp_path {dir}/tmp/proxy;
  fastcgi_temp_path {dir}/tmp/fastcgi;
  uwsgi_temp_path {dir}/tmp/uwsgi;
  scgi_temp_path {dir}/tmp/scgi;
  proxy_cache_path {dir}/cache levels=1:2 keys_zone=hf:10m max_size=64g inactive=1h use_temp_path=off;
  server {{
    listen 127.0.0.1:{port};
    location / {{
      proxy_pass {upstream};
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_cache hf;
      proxy_cache_valid 200 1h;
      proxy_cache_lock on;
{lock}
      proxy_force_ranges on;
      proxy_buffering on;
      proxy_read_timeout 1h;
      add_header X-Cache-Status $upstream_cache_status;
    }}
  }}
}}
"""


class Nginx:
    def __init__(self, work, upstream_url, name, long_lock=True):
        self.dir = pathlib.Path(work) / name
        (self.dir / "tmp").mkdir(parents=True)
        self.port = free_port()
        # proxy_cache_lock_age bounds how long the one request filling an element may take
        # before another is sent upstream: it defaults to 5 s like proxy_cache_lock_timeout.
        lock = ("      proxy_cache_lock_timeout 1h;\n      proxy_cache_lock_age 1h;" if long_lock
                else "      # proxy_cache_lock_timeout and proxy_cache_lock_age: defaults (5 s)")
        conf = self.dir / "nginx.conf"
        conf.write_text(NGINX_CONF.format(workers=os.cpu_count(), dir=self.dir, port=self.port,
                                          upstream=upstream_url, lock=lock))
        self.proc = subprocess.Popen(["nginx", "-p", str(self.dir), "-c", str(conf), "-g", "daemon off;"],
                                     stdout=subprocess.DEVNULL, stderr=open(self.dir / "stderr", "w"),
                                     start_new_session=True)

        def up():
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return True
            except OSError:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"nginx exited: {(self.dir / 'stderr').read_text()}"
                                       f"{(self.dir / 'error.log').read_text()}")
                return False
        wait_for(up, "nginx", timeout=20)
        self.url = f"http://127.0.0.1:{self.port}/{FILE}"

    def pids(self):
        out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(self.proc.pid)], capture_output=True, text=True)
        return [self.proc.pid] + [int(x) for x in out.stdout.split()]

    def rss_mib(self):
        return sum(hwm_kib(p) for p in self.pids()) / 1024

    def stop(self):
        stop(self.proc)
        shutil.rmtree(self.dir, ignore_errors=True)


def curl(url, size):
    """One curl GET to /dev/null: (total s, time to first byte s)."""
    out = subprocess.run(["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code} %{size_download} "
                          "%{time_starttransfer} %{time_total}", url], capture_output=True, text=True)
    code, got, ttfb, total = out.stdout.split()
    if out.returncode != 0 or code != "200" or int(got) != size:
        raise RuntimeError(f"curl {url}: rc {out.returncode} {out.stdout} {out.stderr}")
    return float(total), float(ttfb)


def concurrent(url, size, n):
    """n curls at once: (all-done s, [(total, ttfb)])."""
    fmt = "%{http_code} %{size_download} %{time_starttransfer} %{time_total}"
    start = time.perf_counter()
    procs = [subprocess.Popen(["curl", "-sS", "-o", "/dev/null", "-w", fmt, url], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(n)]
    res = []
    for p in procs:
        out, err = p.communicate()
        code, got, ttfb, total = out.split()
        if p.returncode != 0 or code != "200" or int(got) != size:
            raise RuntimeError(f"concurrent curl: rc {p.returncode} {out} {err}")
        res.append((float(total), float(ttfb)))
    return time.perf_counter() - start, res


def pct(x, base):
    return f"{(x / base - 1) * 100:+.0f}%"


def med(xs):
    return statistics.median(xs)


def r2(xs):
    return [round(x, 2) for x in xs]


def emit(lines):
    print("\n".join(lines))
    sys.stdout.flush()
    return lines


LOCK_1H, LOCK_5S = "nginx (lock, 1 h timeout/age)", "nginx (lock, default 5 s)"


def concurrent_table(a, work, up, size, cold, title, reps_5s=1):
    """a.clients curls at once against fresh ferry / nginx caches; cold: one cold download's
    median seconds per tool (the ratio's base)."""
    variants = [("ferry", lambda i: Ferry(work, up.url, f"ferry-conc-{i}")),
                (LOCK_1H, lambda i: Nginx(work, up.url, f"nginx-conc-{i}")),
                (LOCK_5S, lambda i: Nginx(work, up.url, f"nginx5-conc-{i}", False))]
    conc = {}
    for name, make in variants:
        conc[name] = {"all": [], "gets": [], "ttfb": [], "total": [], "rss": 0}
        for i in range(a.repeats if name != LOCK_5S else reps_5s):
            srv = make(i)
            try:
                mark = up.mark()
                alldone, res = concurrent(srv.url, size, a.clients)
                conc[name]["all"].append(alldone)
                conc[name]["gets"].append(up.file_gets(mark)[0])
                conc[name]["ttfb"].append(sorted(x[1] for x in res))
                conc[name]["total"].append(sorted(x[0] for x in res))
                conc[name]["rss"] = max(conc[name]["rss"], srv.rss_mib())
            finally:
                srv.stop()
    lines = [f"\n### {title}",
             "| server | all done, median s | runs | vs one cold download | upstream GETs of the file | "
             "client TTFB min / median / max s | client total min / median / max s | peak RSS MiB |",
             "|---|---:|---|---:|---|---|---|---:|"]
    for name, c in conc.items():
        base = cold["ferry" if name == "ferry" else "nginx"]
        # The run with the median all-done time stands for the per-client columns.
        k = sorted(range(len(c["all"])), key=lambda j: c["all"][j])[len(c["all"]) // 2]
        t, tt = c["ttfb"][k], c["total"][k]
        lines.append(f"| {name} | {med(c['all']):.2f} | {r2(c['all'])} | {med(c['all']) / base:.2f}x | "
                     f"{c['gets']} | {t[0]:.2f} / {med(t):.2f} / {t[-1]:.2f} | "
                     f"{tt[0]:.2f} / {med(tt):.2f} / {tt[-1]:.2f} | {c['rss']:.0f} |")
    f, n = med(conc["ferry"]["all"]), med(conc[LOCK_1H]["all"])
    lines.append(f"\nferry all-done speed-up over {LOCK_1H}: {n / f:.2f}x; one cold download: "
                 f"ferry {cold['ferry']:.2f} s, nginx {cold['nginx']:.2f} s")
    return conc, emit(lines)


def bench_loopback(a, work, size):
    mib = size / (1 << 20)
    out = []
    up = Upstream(work / "upstream", size)
    rss = {"ferry": {}, "nginx": {}}
    try:
        # --- 2. cold single client (and the direct baseline) ---
        cold = {"direct": [], "ferry": [], "nginx": []}
        gets = {"ferry": [], "nginx": []}
        warm = {"ferry": [], "nginx": []}
        for i in range(a.repeats):
            cold["direct"].append(curl(f"{up.url}/{FILE}", size)[0])
            for tool, cls in (("ferry", Ferry), ("nginx", Nginx)):
                srv = cls(work, up.url, f"{tool}-cold-{i}")
                try:
                    mark = up.mark()
                    cold[tool].append(curl(srv.url, size)[0])
                    gets[tool].append(up.file_gets(mark)[0])
                    if i == 0:
                        # --- 1. warm: the same server, now cached ---
                        for _ in range(a.warm_repeats):
                            warm[tool].append(curl(srv.url, size)[0])
                        n, _ = up.file_gets(mark)
                        if n != 1:
                            print(f"warning: {tool} warm runs made {n - 1} more upstream GETs")
                        rss[tool]["warm"] = srv.rss_mib()
                    rss[tool]["cold"] = max(rss[tool].get("cold", 0), srv.rss_mib())
                finally:
                    srv.stop()
        out += emit([f"\n### 1. Warm download of {mib:.0f} MiB (curl -o /dev/null, cached, page cache hot)",
                     "| tool | median s | runs | MB/s | peak RSS MiB | ferry speed-up |", "|---|---:|---|---:|---:|---:|"]
                    + [f"| {t} | {med(warm[t]):.2f} | {r2(warm[t])} | {size / 1e6 / med(warm[t]):,.0f} | "
                       f"{rss[t]['warm']:.0f} | {'—' if t == 'ferry' else f'{med(warm[t]) / med(warm[ferry_t]):.2f}x'} |"
                       for ferry_t in ["ferry"] for t in ("ferry", "nginx")])
        d = med(cold["direct"])
        out += emit([f"\n### 2. One cold client, {mib:.0f} MiB (fresh cache each run) vs straight from the upstream",
                     "| path | median s | runs | MB/s | upstream GETs | vs direct | peak RSS MiB |",
                     "|---|---:|---|---:|---|---:|---:|"]
                    + [f"| {t} | {med(cold[t]):.2f} | {r2(cold[t])} | {size / 1e6 / med(cold[t]):,.0f} | "
                       f"{gets.get(t, '—')} | {'—' if t == 'direct' else f'{(med(cold[t]) / d - 1) * 100:+.0f}%'} | "
                       f"{rss[t]['cold']:.0f} |" if t != "direct" else
                       f"| direct (curl → upstream) | {d:.2f} | {r2(cold[t])} | {size / 1e6 / d:,.0f} | — | — | — |"
                       for t in ("direct", "ferry", "nginx")])

        # --- 3. concurrent cold clients ---
        conc, lines = concurrent_table(a, work, up, size, {"ferry": med(cold["ferry"]), "nginx": med(cold["nginx"])},
                                       f"3. {a.clients} concurrent cold clients of one {mib:.0f} MiB file "
                                       "(loopback, fresh cache each run)")
        out += lines
        out += emit(["\n### 4. Peak RSS (VmHWM at the end of each scenario; nginx: master + workers)",
                     "| scenario | ferry MiB | nginx MiB |", "|---|---:|---:|",
                     f"| warm downloads | {rss['ferry']['warm']:.0f} | {rss['nginx']['warm']:.0f} |",
                     f"| one cold client | {rss['ferry']['cold']:.0f} | {rss['nginx']['cold']:.0f} |",
                     f"| {a.clients} concurrent cold clients | {conc['ferry']['rss']:.0f} | "
                     f"{conc[LOCK_1H]['rss']:.0f} |"])
    finally:
        up.stop()
    return out


def sh(*cmd, check=True):
    return subprocess.run(list(cmd), check=check, capture_output=True, text=True)


def netns_down():
    sh("ip", "link", "del", VETH_HOST, check=False)
    sh("ip", "netns", "del", NS, check=False)


def netns_up(rate):
    netns_down()
    sh("ip", "netns", "add", NS)
    sh("ip", "link", "add", VETH_HOST, "type", "veth", "peer", "name", VETH_NS)
    sh("ip", "link", "set", VETH_NS, "netns", NS)
    sh("ip", "addr", "add", f"{HOST_IP}/24", "dev", VETH_HOST)
    sh("ip", "link", "set", VETH_HOST, "up")
    for c in (["ip", "addr", "add", f"{NS_IP}/24", "dev", VETH_NS], ["ip", "link", "set", VETH_NS, "up"],
              ["ip", "link", "set", "lo", "up"],
              # the upstream side's egress: everything the upstream sends is shaped
              ["tc", "qdisc", "add", "dev", VETH_NS, "root", "tbf", "rate", rate, "burst", "64kb",
               "latency", "50ms"]):
        sh("ip", "netns", "exec", NS, *c)


def snapshot(hub, cache_dir):
    """The npm client's snapshot download: HTTP only (HF_CLIENT_XET=0). The stand-in advertises
    Xet as the Hub does and its CAS serves nothing, so the baseline straight from it has the
    client's Xet path off; through ferry the client sees no Xet at all and takes HTTP anyway."""
    start = time.perf_counter()
    p = subprocess.run(["node", str(ROOT / "tests/tools/npm/hf_client.mjs"), "snapshot", hub, "org/tiny-model",
                        "main", str(cache_dir)], capture_output=True, text=True, timeout=1800,
                       env=dict(os.environ, HF_CLIENT_XET="0"))
    secs = time.perf_counter() - start
    if p.returncode != 0:
        raise RuntimeError(f"hf_client snapshot {hub}: {p.stderr[-2000:]}")
    shutil.rmtree(cache_dir, ignore_errors=True)
    return secs


def bench_netns(a, work):
    size = a.netns_size_mib << 20
    out = []
    try:
        netns_up(a.rate)
        if a.shaped_clients_mib:
            shaped = a.shaped_clients_mib << 20
            up = Upstream(work / "upstream-ns-direct", shaped, direct=True, netns=NS, host=NS_IP)
            try:
                one = {"direct": curl(f"{up.url}/{FILE}", shaped)[0]}
                for tool, cls in (("ferry", Ferry), ("nginx", Nginx)):
                    srv = cls(work, up.url, f"{tool}-shaped-cold")
                    try:
                        one[tool] = curl(srv.url, shaped)[0]
                    finally:
                        srv.stop()
                out += emit([f"\n### 3b. One cold client of a {a.shaped_clients_mib} MiB file, upstream behind tbf "
                             f"{a.rate}", "| path | seconds | MB/s | vs direct |", "|---|---:|---:|---:|"]
                            + [f"| {t} | {one[t]:.2f} | {shaped / 1e6 / one[t]:,.0f} | "
                               f"{'—' if t == 'direct' else pct(one[t], one['direct'])} |"
                               for t in ("direct", "ferry", "nginx")])
                _, lines = concurrent_table(a, work, up, shaped, one,
                                            f"3c. {a.clients} concurrent cold clients of one {a.shaped_clients_mib} "
                                            f"MiB file, upstream behind tbf {a.rate}")
                out += lines
            finally:
                up.stop()
        up = Upstream(work / "upstream-ns", size, direct=False, netns=NS, host=NS_IP)
        try:
            direct = snapshot(up.url, work / "client-direct")
            srv = Ferry(work, up.url, "ferry-ns", allow=up.cdn)
            try:
                mark = up.mark()
                first = snapshot(srv.hf, work / "client-1")
                n1, mark2 = up.file_gets(mark)
                lfs = len({e["path"].split("?")[0] for e in up.entries()[mark:mark2] if e["server"] == "cdn"})
                second = snapshot(srv.hf, work / "client-2")
                after = up.entries()[mark2:]
                rss = srv.rss_mib()
            finally:
                srv.stop()
        finally:
            up.stop()
    finally:
        netns_down()
    out += emit([f"\n### 5. Two machines download the repo (npm @huggingface/hub snapshotDownload; "
                 f"{a.netns_size_mib} MiB model + small files) through ferry serve; upstream behind tbf {a.rate}",
                 "| run | seconds | MB/s (model) | upstream requests |", "|---|---:|---:|---|",
                 f"| straight from the upstream (no cache) | {direct:.2f} | {size / 1e6 / direct:,.0f} | all |",
                 f"| first machine via ferry (cold) | {first:.2f} | {size / 1e6 / first:,.0f} | "
                 f"{n1} CDN GETs for {lfs} LFS files |",
                 f"| second machine via ferry (warm) | {second:.2f} | {size / 1e6 / second:,.0f} | "
                 f"{len(after)} |",
                 f"\nSecond machine vs first: **{first / second:.1f}x** faster; first machine vs no cache: "
                 f"{(first / direct - 1) * 100:+.0f}%; ferry peak RSS {rss:.0f} MiB."])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mib", type=int, default=1024)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--warm-repeats", type=int, default=5)
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--netns-size-mib", type=int, default=2048)
    ap.add_argument("--rate", default="300mbit")
    ap.add_argument("--shaped-clients-mib", type=int, default=256,
                    help="file size for the concurrent clients behind the shaped link (0: skip)")
    ap.add_argument("--skip-loopback", action="store_true")
    ap.add_argument("--skip-netns", action="store_true")
    ap.add_argument("--work", default="/var/tmp", help="parent of the temporary dir (caches go there)")
    a = ap.parse_args()
    # SIGTERM unwinds like Ctrl-C, so the servers stop and the namespace goes away.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    nginx_v = subprocess.run(["nginx", "-v"], capture_output=True, text=True).stderr.strip()
    print(f"# {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; {ferry_binary()}; {nginx_v}; "
          f"curl {subprocess.run(['curl', '--version'], capture_output=True, text=True).stdout.split()[1]}; "
          f"node {subprocess.run(['node', '--version'], capture_output=True, text=True).stdout.strip()}")
    work = pathlib.Path(tempfile.mkdtemp(prefix="ferry-serve-bench-", dir=a.work))
    try:
        if not a.skip_loopback:
            bench_loopback(a, work, a.size_mib << 20)
        if not a.skip_netns:
            bench_netns(a, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
