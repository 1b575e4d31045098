#!/usr/bin/env python3
"""The web UI at scale (issue 15; docs/benchmarks.md): time to the first drawn compare chart
of 100 runs x 1,000,000 points, and to an interactive first page of a 10,000-run table,
measured in headless Chromium (median of 5 cold loads), with the server's query time
alongside, and the peer: what a UI without server-side downsampling must fetch (one run's
full history through get-history, as MLflow's UI and clients read it, times the runs).

  cmake --preset release -DFERRY_BENCH=ON
  cmake --build --preset release --target ferry ui_fixture
  bench/ui_bench.py --ferry build/release/src/apps/ferry --fixture build/release/ui_fixture \
      --db /tmp/ui-bench/tracker.db
The fixture (~3.7 GiB for 1e8 points, minutes) is written once and reused when --db exists."""
import argparse
import json
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests/cli"))
from serve_helpers import ServeProcess  # noqa: E402
from ui_helpers import Client  # noqa: E402


def timed(fn, repeats):
    out = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return out


def grid_experiment(c):
    """Experiment 'grid' of the fixture (mlflow#9779's freezing compare view): 10 runs x 10 keys x
    10,000 steps. Returns (id, run ids, keys)."""
    exp = experiment_id(c, "grid")
    return exp, run_ids(c, exp), [f"metric_{k}" for k in range(10)]


def experiment_id(c, name):
    path = "/api/2.0/mlflow/experiments/get-by-name?experiment_name=" + name
    return c.request("GET", path)["experiment"]["experiment_id"]


def run_ids(c, exp):
    runs = c.api("runs/search", {"experiment_ids": [exp], "max_results": 1000})["runs"]
    return [r["info"]["run_id"] for r in runs]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ferry", required=True)
    ap.add_argument("--fixture", required=True)
    ap.add_argument("--db", required=True)
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--points", type=int, default=1_000_000)
    ap.add_argument("--table", type=int, default=10_000)
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args()

    db = pathlib.Path(a.db)
    if not db.exists():
        db.parent.mkdir(parents=True, exist_ok=True)
        t = time.time()
        subprocess.run([a.fixture, str(db), str(a.runs), str(a.points), str(a.table)], check=True)
        print(f"fixture: {a.runs} runs x {a.points} points + {a.table} runs in {time.time() - t:.0f} s, "
              f"{db.stat().st_size / 2**30:.2f} GiB", flush=True)
    data = pathlib.Path(tempfile.mkdtemp(prefix="ui-bench-"))
    server = ServeProcess(a.ferry, data / "data", "--tracker-db", db, "--threads", "2")
    try:
        c = Client(server.url)
        curves, table = experiment_id(c, "curves"), experiment_id(c, "table")
        ids = run_ids(c, curves)
        compare = f"#/compare?exp={curves}&runs={','.join(ids)}&keys=loss"
        grid_exp, grid_ids, grid_keys = grid_experiment(c)
        grid = f"#/compare?exp={grid_exp}&runs={','.join(grid_ids)}&keys={','.join(grid_keys)}"
        p = subprocess.run(["node", str(ROOT / "bench/ui_bench.mjs"), server.url, compare,
                            f"#/experiments/{table}", str(a.repeats), grid],
                           capture_output=True, text=True, timeout=1800)
        if p.returncode != 0:
            sys.exit(p.stderr)
        b = json.loads(p.stdout.strip().splitlines()[-1])
        cmp_ms = [r["ms"] for r in b["compare"]]
        tab_ms = [r["ms"] for r in b["table"]]
        sorted_ms = [r["ms"] for r in b["table_sorted"]]
        zoom_ms = [r["zoom"]["ms"] for r in b["compare"]]
        first = b["compare"][0]
        max_results = first["maxResults"]
        # The server alone: the UI's requests (4 x 25 runs in parallel), from Python.
        def bulk(chunk):
            q = urllib.parse.urlencode([("run_ids", r) for r in chunk] +
                                       [("metric_key", "loss"), ("max_results", max_results)])
            Client(server.url).request("GET", "/ajax-api/2.0/mlflow/metrics/get-history-bulk-interval?" + q)
        chunks = [ids[i:i + 25] for i in range(0, len(ids), 25)]
        with ThreadPoolExecutor(len(chunks)) as pool:
            srv_bulk = timed(lambda: list(pool.map(bulk, chunks)), a.repeats)
        srv_search = timed(lambda: c.api("runs/search", {"experiment_ids": [table], "max_results": 100}),
                           a.repeats)
        # Peer: one run's whole history through get-history (25,000 points a page).
        t = time.perf_counter()
        token, n = None, 0
        while True:
            q = {"run_id": ids[0], "metric_key": "loss", "max_results": 25000}
            if token:
                q["page_token"] = token
            r = c.request("GET", "/api/2.0/mlflow/metrics/get-history?" + urllib.parse.urlencode(q))
            n += len(r.get("metrics", []))
            token = r.get("next_page_token")
            if not token:
                break
        peer_ms = (time.perf_counter() - t) * 1000
        med = statistics.median
        ttfb = [max(s["ttfb"] for s in r["server"]) for r in b["compare"]]
        tab_ttfb = [r["server"][0]["ttfb"] for r in b["table"] if r["server"]]
        print(json.dumps(b, indent=None)[:2000], file=sys.stderr)
        print(f"\nweb UI, {len(ids)} runs x {a.points:,} points of 'loss'; {a.table:,}-run table; "
              f"headless Chromium, cold cache, median of {a.repeats}")
        print("| measure | median | all runs |\n|---|---|---|")
        print(f"| compare view: first chart drawn (navigation start -> drawn) | {med(cmp_ms):.0f} ms | "
              f"{', '.join(f'{x:.0f}' for x in cmp_ms)} |")
        print("| ... its bulk requests, slowest first byte (server query + JSON), in the browser | "
              f"{med(ttfb):.0f} ms | "
              f"{', '.join(f'{x:.0f}' for x in ttfb)} |")
        print(f"| ... the same {len(chunks)} requests from Python (server alone) | {med(srv_bulk):.0f} ms | "
              f"{', '.join(f'{x:.0f}' for x in srv_bulk)} |")
        print(f"| ... zoom to steps 400,000-410,000: refetched and redrawn | {med(zoom_ms):.0f} ms | "
              f"{', '.join(f'{x:.0f}' for x in zoom_ms)} |")
        grid_ms = [r["ms"] for r in b["grid"]]
        print("| mlflow#9779's case: 10 charts x 10 runs x 10,000 steps, all drawn | "
              f"{med(grid_ms):.0f} ms | "
              f"{', '.join(f'{x:.0f}' for x in grid_ms)} |")
        print(f"| runs table: first page of 100 interactive | {med(tab_ms):.0f} ms | "
              f"{', '.join(f'{x:.0f}' for x in tab_ms)} |")
        print(f"| ... the same sorted by metrics.loss (server-side order_by) | {med(sorted_ms):.0f} ms | "
              f"{', '.join(f'{x:.0f}' for x in sorted_ms)} |")
        print(f"| ... its runs/search, first byte in the browser | {med(tab_ttfb):.0f} ms | "
              f"{', '.join(f'{x:.0f}' for x in tab_ttfb)} |")
        print(f"| ... runs/search from Python (server alone) | {med(srv_search):.0f} ms | "
              f"{', '.join(f'{x:.0f}' for x in srv_search)} |")
        print(f"\npoints asked per series: max_results {max_results} for {first['pixels']} px; "
              f"received at most {first['maxPointsPerRun']} per run, {first['points']:,} in all "
              f"({first['requests']} requests)")
        print(f"peer: one run's full history via get-history: {n:,} points in {peer_ms:.0f} ms; "
              f"x {len(ids)} runs = {peer_ms * len(ids) / 1000:.0f} s before a chart could draw "
              f"(ratio {peer_ms * len(ids) / med(cmp_ms):.0f}x)")
    finally:
        server.stop()
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
