#!/usr/bin/env python3
"""Metric ingest through `ferry serve`'s MLflow API (issue 14; results in docs/benchmarks.md).

  /usr/bin/python3 bench/tracker_ingest.py [--clients 8] [--steps 2000] [--keys 10] [--batch 1000]
                                           [--encode client|ahead]
                                           [--tracker-db postgresql://user@host:port/db]

Starts `ferry serve --data DIR` (release build; the tracker on its default SQLite file, or on
the PostgreSQL database --tracker-db names: give a fresh one, its table sizes are reported), creates
one run per client, then each client (a process with one kept-alive HTTP connection) logs
--steps steps of --keys metrics with runs/log-batch in batches of --batch points, as training
loops with a batching logger do. Reports points/s over the whole run, batch latency p50/p95,
and the server's peak RSS; then checks one run's history is complete (get-history). The peer,
a stock MLflow tracking server, cannot be installed here (no PyPI); its issue tracker reports
about 250 points/s with batched calls (mlflow#5269). Speed is reported, never asserted.
"""
import argparse
import datetime
import http.client
import json
import multiprocessing
import os
import pathlib
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from benchlib import ferry_binary  # noqa: E402

API = "/api/2.0/mlflow/"


def call(conn, endpoint, body):
    conn.request("POST", API + endpoint, json.dumps(body), {"Content-Type": "application/json"})
    r = conn.getresponse()
    data = r.read()
    if r.status != 200:
        raise RuntimeError(f"{endpoint}: HTTP {r.status} {data[:300]!r}")
    return json.loads(data)


def batches(run_id, steps, keys, batch, t0):
    """The log-batch bodies one client sends, as dicts."""
    pending = []
    for step in range(steps):
        for k in range(keys):
            pending.append({"key": f"m{k}", "value": (step * 7 + k) % 101 / 10.0,
                            "timestamp": t0 + step, "step": step})
            if len(pending) == batch:
                yield {"run_id": run_id, "metrics": pending}
                pending = []
    if pending:
        yield {"run_id": run_id, "metrics": pending}


def post(conn, body):
    conn.request("POST", API + "runs/log-batch", body, {"Content-Type": "application/json"})
    r = conn.getresponse()
    data = r.read()
    if r.status != 200:
        raise RuntimeError(f"log-batch: HTTP {r.status} {data[:300]!r}")


def connect(port):
    """A kept-alive connection with TCP_NODELAY, as MLflow's Python client (requests/urllib3)
    and curl set it: without it a body's last partial segment waits for the server's delayed ACK
    (about 40 ms per request on Linux)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    conn.connect()
    conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return conn


def client(args):
    """One training process's logger. encode="client": builds and JSON-encodes each batch as
    it goes (a Python logger's real cost, on the same 2 cores as the server); "ahead": encodes
    every batch before the shared start time (a load generator: what the server can take)."""
    port, run_id, steps, keys, batch, encode, start_at = args
    conn = connect(port)
    t0 = int(time.time() * 1000)
    bodies = batches(run_id, steps, keys, batch, t0)
    if encode == "ahead":
        bodies = [json.dumps(b).encode() for b in bodies]
    time.sleep(max(0.0, start_at - time.time()))
    latencies = []
    cpu0 = time.process_time()
    for b in bodies:
        if encode == "client":
            b = json.dumps(b)
        start = time.perf_counter()
        post(conn, b)
        latencies.append(time.perf_counter() - start)
    return latencies, time.process_time() - cpu0


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--keys", type=int, default=10)
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--tracker-db", default="",
                    help="a fresh PostgreSQL database (postgresql://...) instead of SQLite")
    ap.add_argument("--encode", choices=("client", "ahead"), default="client",
                    help="client: each client builds and encodes its batches while sending (a "
                         "Python logger); ahead: bodies encoded before the clock starts (a load "
                         "generator, measuring the server)")
    a = ap.parse_args()
    work = pathlib.Path(tempfile.mkdtemp(prefix="ferry-tracker-bench-", dir="/var/tmp"))
    err = work / "serve.log"
    extra = ["--tracker-db", a.tracker_db] if a.tracker_db else []
    server = subprocess.Popen([ferry_binary(), "serve", "--data", str(work / "data"), "--listen",
                               "127.0.0.1:0", *extra], stdout=subprocess.DEVNULL, stderr=open(err, "w"))
    try:
        for _ in range(600):
            m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", err.read_text())
            if m:
                break
            time.sleep(0.05)
        port = int(m.group(1))
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        exp = call(conn, "experiments/create", {"name": "ingest"})["experiment_id"]
        runs = [call(conn, "runs/create", {"experiment_id": exp, "start_time": 1})["run"]["info"]["run_id"]
                for _ in range(a.clients)]
        server_cpu0 = cpu_seconds(server.pid)
        # Every client starts at the same moment, after encoding ahead if asked to.
        start_at = time.time() + 1.0 + (a.steps * a.keys / 400_000 if a.encode == "ahead" else 0)
        with multiprocessing.Pool(a.clients) as pool:
            out = pool.map(client, [(port, r, a.steps, a.keys, a.batch, a.encode, start_at)
                                    for r in runs])
        secs = time.time() - start_at
        lat = [lst for lst, _ in out]
        client_cpu = sum(c for _, c in out)
        points = a.clients * a.steps * a.keys
        all_lat = sorted(x for lst in lat for x in lst)
        server_cpu = cpu_seconds(server.pid) - server_cpu0
        hwm = 0
        for line in open(f"/proc/{server.pid}/status"):
            if line.startswith("VmHWM:"):
                hwm = int(line.split()[1]) / 1024
        # Every point is there (a new connection: the setup's one sat idle during the run).
        conn = connect(port)
        got, token = 0, ""
        while True:
            q = f"run_id={runs[0]}&metric_key=m0&max_results=25000" + (f"&page_token={token}" if token else "")
            conn.request("GET", API + "metrics/get-history?" + q)
            body = json.loads(conn.getresponse().read())
            got += len(body.get("metrics", []))
            token = body.get("next_page_token", "")
            if not token:
                break
        assert got == a.steps, f"history of m0 has {got} points, expected {a.steps}"
        if a.tracker_db:  # the tables with their indexes (the database's own overhead aside)
            size = int(subprocess.run(
                ["psql", "-X", "-Atc", "SELECT sum(pg_total_relation_size(oid)) FROM pg_class "
                 "WHERE relnamespace = 'public'::regnamespace AND relkind = 'r'", a.tracker_db],
                check=True, capture_output=True, text=True).stdout)
        else:
            db = work / "data/tracker/tracker.db"
            size = sum(p.stat().st_size for p in db.parent.glob("tracker.db*"))
        print(f"# {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; {ferry_binary()}")
        engine = "PostgreSQL" if a.tracker_db else "SQLite"
        print(f"\n### {engine}: {a.clients} clients x {a.steps} steps x {a.keys} metrics, log-batch of {a.batch} "
              f"points, encoded {'by each client while sending' if a.encode == 'client' else 'ahead'}")
        print("| points | seconds | points/s | batch p50 ms | batch p95 ms | server CPU s | clients CPU s | server peak RSS MiB | DB bytes/point |")
        print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        p50 = statistics.median(all_lat) * 1000
        p95 = all_lat[int(len(all_lat) * 0.95)] * 1000
        print(f"| {points:,} | {secs:.2f} | {points / secs:,.0f} | {p50:.1f} | {p95:.1f} | {server_cpu:.2f} | {client_cpu:.2f} | {hwm:.0f} | "
              f"{size / points:.1f} |")
    finally:
        server.terminate()
        server.wait(timeout=30)
        subprocess.run(["rm", "-rf", str(work)])


if __name__ == "__main__":
    main()
