#!/usr/bin/env python3
"""Loader benchmark against webdataset itself (issue 16), Ferry and webdataset in the same run
on the same local shards: 20,000 samples of 10 KB (`.bin` random bytes + `.cls` label), 20
shards written by Python's tarfile (shards "from another tool": Ferry indexes them itself).

Each case is a child process reading one epoch and counting samples (no work per batch), the
median of --runs runs; peak RSS of the main process and the largest worker.

  cases: webdataset and ferry.data, DataLoader(num_workers=2) and in-process (num_workers=0),
  batches of 64, samples decoded (`.cls` -> int) and collated by PyTorch's default_collate:
    wds                 wds.WebDataset(...).decode().to_tuple(), DataLoader(batch_size=64)
    wds_batched         the same with webdataset's .batched(64), DataLoader(batch_size=None)
    ferry               ShardDataset(dir, decode="torchrgb"), DataLoader(batch_size=64,
                        collate_fn=ferry.data.collate): batches through shared memory
    ferry_batched       ds.batched(64, collate_fn=default_collate), DataLoader(batch_size=None)
    ferry_torchcollate  DataLoader(batch_size=64) with PyTorch's own collate and hand-over

webdataset is not packaged by Debian: bring its source at bench time (never commit it),
    git --git-dir=$(fetched mirror) archive HEAD src | tar -x -C /tmp/wds
and point --webdataset at /tmp/wds/src; python3-braceexpand and python3-yaml are its
dependencies (scripts/install-deps.sh --bench).

  /usr/bin/python3 bench/loader_workers.py --webdataset /tmp/wds/src [--runs 5] [--samples 20000]
Needs build/release/python (ferry_native).
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tarfile
import io

ROOT = pathlib.Path(__file__).resolve().parents[1]

COMMON = r"""
import json, resource, sys, time
import torch
args = json.loads(sys.argv[1])
def report(n, t0):
    dt = time.time() - t0
    print(json.dumps({"samples": n, "seconds": dt, "rate": n / dt,
        "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "child_rss_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}))
"""

WDS = COMMON + r"""
import webdataset as wds
urls = args["shards"]
ds = wds.WebDataset(urls, shardshuffle=False, empty_check=False).decode().to_tuple("bin", "cls")
if args["mode"] == "wds_batched":
    ds = ds.batched(64)
    dl = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=args["workers"])
else:
    dl = torch.utils.data.DataLoader(ds, batch_size=64, num_workers=args["workers"])
t0 = time.time(); n = 0
for x, y in dl: n += len(y)
report(n, t0)
"""

FERRY = COMMON + r"""
import ferry.data
from ferry.data import ShardDataset
ds = ShardDataset(args["dir"], shuffle=False, decode="torchrgb")
if args["mode"] == "ferry_batched":  # batches made in the workers; handed over in shared memory
    dl = torch.utils.data.DataLoader(ds.batched(64, collate_fn=torch.utils.data.default_collate),
                                     batch_size=None, num_workers=args["workers"])
elif args["mode"] == "ferry":        # ferry.data.collate: default_collate + shared-memory hand-over
    dl = torch.utils.data.DataLoader(ds, batch_size=64, num_workers=args["workers"],
                                     collate_fn=ferry.data.collate)
else:                                # ferry_torchcollate: PyTorch's own hand-over
    dl = torch.utils.data.DataLoader(ds, batch_size=64, num_workers=args["workers"])
t0 = time.time(); n = 0
for b in dl: n += len(b["cls"])
report(n, t0)
"""


def make_shards(work, samples, size, per_shard):
    shards = []
    for s in range(0, samples, per_shard):
        path = work / f"train-{s // per_shard:06d}.tar"
        shards.append(str(path))
        if path.exists():
            continue
        tmp = path.with_suffix(".tmp")
        with tarfile.open(tmp, "w", format=tarfile.USTAR_FORMAT) as tar:
            for i in range(s, min(s + per_shard, samples)):
                for ext, data in (("bin", os.urandom(size)), ("cls", str(i % 1000).encode())):
                    info = tarfile.TarInfo(f"{i:08d}.{ext}")
                    info.size = len(data)
                    tar.addfile(info, io.BytesIO(data))
        tmp.rename(path)
    return shards


def child(code, args, env):
    p = subprocess.run(["/usr/bin/python3", "-c", code, json.dumps(args)], env=env,
                       capture_output=True, text=True, timeout=900)
    if p.returncode != 0:
        sys.exit(f"benchmark child failed:\n{p.stderr[-3000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--webdataset", required=True, help="webdataset's src/ directory")
    ap.add_argument("--samples", type=int, default=20000)
    ap.add_argument("--size", type=int, default=10 * 1000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--workdir", default=str(ROOT / ".bench/loader"))
    ap.add_argument("--cases", default="wds,wds_batched,ferry,ferry_batched,ferry_torchcollate")
    ap.add_argument("--workers", default="2,0")
    a = ap.parse_args()
    work = pathlib.Path(a.workdir)
    work.mkdir(parents=True, exist_ok=True)
    shards = make_shards(work, a.samples, a.size, 1000)
    env = dict(os.environ, PYTHONPATH=f"{ROOT / 'build/release/python'}:{a.webdataset}",
               FERRY_SHARD_INDEX_CACHE=str(work / "index-cache"))
    env.pop("LD_PRELOAD", None)
    results = {}
    for workers in [int(w) for w in a.workers.split(",")]:
        for mode in a.cases.split(","):
            code = WDS if mode.startswith("wds") else FERRY
            runs = [child(code, {"shards": shards, "dir": str(work) + "/", "mode": mode,
                                 "workers": workers}, env) for _ in range(a.runs)]
            rates = sorted(r["rate"] for r in runs)
            results[f"{mode} w{workers}"] = {
                "rate": statistics.median(rates), "rates": rates,
                "rss_mib": max(r["rss_mib"] for r in runs),
                "child_rss_mib": max(r["child_rss_mib"] for r in runs),
                "samples": runs[0]["samples"]}
            r = results[f"{mode} w{workers}"]
            print(f"{mode} w{workers}: {r['rate']:,.0f} samples/s (runs {[round(x) for x in rates]}), "
                  f"peak RSS {r['rss_mib']:.0f} / {r['child_rss_mib']:.0f} MiB", flush=True)
    print(f"\n{a.samples} samples of {a.size} B, load {os.getloadavg()[0]:.1f}\n")
    print("| case | samples/s (median) | runs | peak RSS MiB (main / worker) |\n|---|---:|---|---|")
    for k, r in results.items():
        print(f"| {k} | {r['rate']:,.0f} | {[round(x) for x in r['rates']]} | "
              f"{r['rss_mib']:.0f} / {r['child_rss_mib']:.0f} |")
    for w in a.workers.split(","):
        best = lambda p: max((r["rate"] for k, r in results.items()
                              if k.startswith(p) and k.endswith(f" w{w}")), default=0)
        if best("wds") and best("ferry"):
            print(f"num_workers={w}: best ferry / best webdataset = {best('ferry') / best('wds'):.2f}x")
    (work / "results.json").write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
