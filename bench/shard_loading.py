#!/usr/bin/env python3
"""Shard benchmarks (issue 5), one run each, Ferry and a peer on the same data in the same run:

 1. slow NAS: 20,000 loose 100 KiB objects read in random order (a map-style Dataset doing one
    GET per file, the usual image-folder loader) vs the same data as Ferry shards, both through
    a 2 ms round-trip delay line in front of RGW; DataLoader(num_workers=2).
 2. loader: ferry.data.ShardDataset vs a pure-Python tarfile streaming reader (what webdataset
    does) on the same shards, from local disk and from RGW; num_workers=2, no decoding; and
    each with num_workers=0 (Ferry's reader has its own I/O threads).
 3. training: a loop whose step takes a fixed 10 ms, fed from shards on local disk vs shards
    behind the slow-NAS delay line: iterations/s.

  /usr/bin/python3 bench/shard_loading.py [--files 20000] [--size 102400] [--workdir .bench/shards]
Needs build/release (ferry + python/ferry) and ~8 GB of disk in the workdir.
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import benchlib  # noqa: E402

ROOT = benchlib.ROOT

CHILD_COMMON = r"""
import json, os, resource, sys, time, tarfile, random
import torch
args = json.loads(sys.argv[1])

def report(n, t0, extra=None):
    dt = time.time() - t0
    out = {"samples": n, "seconds": dt, "rate": n / dt,
           "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
           "child_rss_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}
    out.update(extra or {})
    print(json.dumps(out))

def s3():
    import boto3
    from botocore.config import Config
    return boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL"],
                        config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 5}))
"""

LOOSE = CHILD_COMMON + r"""
class Loose(torch.utils.data.Dataset):
    def __init__(self, keys): self.keys, self.client = keys, None
    def __len__(self): return len(self.keys)
    def __getitem__(self, i):
        if self.client is None: self.client = s3()
        body = self.client.get_object(Bucket=args["bucket"], Key=self.keys[i])["Body"].read()
        return {"__key__": self.keys[i], "bin": body}
keys = [f"{args['prefix']}d/{i:05d}.bin" for i in range(args["files"])]
dl = torch.utils.data.DataLoader(Loose(keys), batch_size=None, shuffle=True, num_workers=2,
                                 generator=torch.Generator().manual_seed(0))
t0 = time.time(); n = 0
for s in dl: n += 1
report(n, t0)
"""

FERRY = CHILD_COMMON + r"""
from ferry.data import ShardDataset
ds = ShardDataset(args["url"], shuffle=True, seed=0)
bs = args.get("batch")
dl = torch.utils.data.DataLoader(ds.batched(bs) if bs else ds, batch_size=None,
                                 num_workers=args.get("workers", 2))
t0 = time.time(); n = 0
for s in dl: n += len(s) if bs else 1
report(n, t0)
"""

TARFILE = CHILD_COMMON + r"""
class TarStream(torch.utils.data.IterableDataset):
    # What webdataset does: stream each shard through tarfile in "r|" mode, group by key.
    def __init__(self, shards): self.shards = shards
    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        wid, nw = (info.id, info.num_workers) if info else (0, 1)
        client = s3() if args["where"] == "s3" else None
        for i, shard in enumerate(self.shards):
            if i % nw != wid: continue
            stream = (client.get_object(Bucket=args["bucket"], Key=shard)["Body"]
                      if client else open(shard, "rb"))
            sample, key = {}, None
            with tarfile.open(fileobj=stream, mode="r|") as tar:
                for m in tar:
                    if not m.isfile(): continue
                    k, _, ext = m.name.partition(".")
                    if key is not None and k != key:
                        yield sample; sample = {}
                    key = k; sample["__key__"] = k
                    sample[ext] = tar.extractfile(m).read()
            if sample: yield sample
class Batched(torch.utils.data.IterableDataset):
    def __init__(self, ds, n): self.ds, self.n = ds, n
    def __iter__(self):
        batch = []
        for s in self.ds:
            batch.append(s)
            if len(batch) == self.n:
                yield batch; batch = []
        if batch: yield batch
bs = args.get("batch")
ds = TarStream(args["shards"])
dl = torch.utils.data.DataLoader(Batched(ds, bs) if bs else ds, batch_size=None,
                                 num_workers=args.get("workers", 2))
t0 = time.time(); n = 0
for s in dl: n += len(s) if bs else 1
report(n, t0)
"""

TRAIN = CHILD_COMMON + r"""
import ferry.data
from ferry.data import ShardDataset
torch.manual_seed(0)
model = torch.nn.Linear(256, 10)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
ds = ShardDataset(args["url"], shuffle=True, seed=0, prefetch_shards=args.get("prefetch", 2))
def collate(b):
    x = torch.tensor([list(s["bin"][:256]) for s in b], dtype=torch.float32)
    return ferry.data.shared(x) if args.get("shared") else x   # shared: ferry's hand-over
dl = torch.utils.data.DataLoader(ds, batch_size=16, num_workers=args.get("workers", 2),
                                 collate_fn=collate)
steps, t0 = 0, None
for x in dl:
    start = time.time()
    loss = model(x).pow(2).mean(); opt.zero_grad(); loss.backward(); opt.step()
    time.sleep(max(0.0, 0.010 - (time.time() - start)))  # the fixed 10 ms step (a GPU's wait)
    steps += 1
    if steps == 20: t0 = time.time()           # warm-up excluded
    if steps == args["steps"] + 20: break
report(steps - 20, t0, {"its": (steps - 20) / (time.time() - t0)})
"""


def child(code, args, env):
    p = subprocess.run(["/usr/bin/python3", "-c", code, json.dumps(args)], env=env,
                       capture_output=True, text=True, timeout=1800)
    if p.returncode != 0:
        sys.exit(f"benchmark child failed:\n{p.stderr[-3000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=20000)
    ap.add_argument("--size", type=int, default=100 * 1024)
    ap.add_argument("--workdir", default=str(ROOT / ".bench/shards"))
    ap.add_argument("--train-steps", type=int, default=500)
    ap.add_argument("--reuse-loose", action="store_true",
                    help="take case 1's loose-file numbers from the previous results.json")
    ap.add_argument("--only-train", type=int, default=0, metavar="RUNS",
                    help="only case 3 (no loose files), RUNS runs of each variant, medians")
    a = ap.parse_args()
    work = pathlib.Path(a.workdir)
    work.mkdir(parents=True, exist_ok=True)
    ferry = benchlib.ferry_binary()
    rgw = benchlib.Rgw(work / "rgw", bluestore_gib=12)
    env = rgw.client_env()
    env["PYTHONPATH"] = str(ROOT / "build/release/python")
    env.pop("LD_PRELOAD", None)
    bucket = rgw.bucket

    loose = work / "loose"
    if not (loose / "d" / f"{a.files - 1:05d}.bin").exists():
        (loose / "d").mkdir(parents=True, exist_ok=True)
        for i in range(a.files):
            (loose / "d" / f"{i:05d}.bin").write_bytes(os.urandom(a.size))
    run = lambda *c: subprocess.run([ferry, *map(str, c)], env=env, check=True, stdout=subprocess.DEVNULL)
    print("uploading loose files and packing shards ...", flush=True)
    if not a.only_train:
        run("cp", "-r", loose, f"s3://{bucket}/bench-loose/")
    run("shard", "pack", "--overwrite", loose, work / "shards" / "train", "--target-size", "128M")
    run("shard", "pack", "--overwrite", loose, f"s3://{bucket}/bench-shards/train", "--target-size", "128M")
    index = json.loads((work / "shards" / "train.index.json").read_text())
    local_shards = [str(work / "shards" / s["name"]) for s in index["shards"]]
    s3_shards = [f"bench-shards/{s['name']}" for s in index["shards"]]

    port_file = work / "proxy.port"
    port_file.unlink(missing_ok=True)
    proxy = subprocess.Popen([sys.executable, str(ROOT / "bench/delay_proxy.py"), "--target",
                              rgw.endpoint.split("//", 1)[1], "--delay-ms", "1", "--port-file", str(port_file)])
    try:
        while not port_file.exists():
            time.sleep(0.05)
        slow = dict(env, AWS_ENDPOINT_URL=f"http://127.0.0.1:{port_file.read_text()}")
        results = {}
        if a.only_train:
            return train_only(a, work, bucket, env, slow, rgw)
        print("1. slow NAS (2 ms RTT): loose random reads vs shards", flush=True)
        if a.reuse_loose:
            results["loose_slow"] = json.loads((work / "results.json").read_text())["loose_slow"]
        else:
            results["loose_slow"] = child(LOOSE, {"bucket": bucket, "prefix": "bench-loose/", "files": a.files}, slow)
        results["ferry_slow"] = child(FERRY, {"url": f"s3://{bucket}/bench-shards/train"}, slow)
        print("2. loader: ShardDataset vs tarfile streaming", flush=True)
        results["ferry_local"] = child(FERRY, {"url": str(work / "shards" / "train")}, env)
        results["tarfile_local"] = child(TARFILE, {"where": "local", "shards": local_shards, "bucket": bucket}, env)
        results["ferry_s3"] = child(FERRY, {"url": f"s3://{bucket}/bench-shards/train"}, env)
        results["tarfile_s3"] = child(TARFILE, {"where": "s3", "shards": s3_shards, "bucket": bucket}, env)
        # Each reader in its own best setting: Ferry's reader has its own I/O threads (GIL
        # released), so it needs no worker processes and skips the DataLoader's per-sample IPC.
        results["ferry_local_w0"] = child(FERRY, {"url": str(work / "shards" / "train"), "workers": 0}, env)
        results["tarfile_local_w0"] = child(TARFILE, {"where": "local", "shards": local_shards, "bucket": bucket, "workers": 0}, env)
        results["ferry_s3_w0"] = child(FERRY, {"url": f"s3://{bucket}/bench-shards/train", "workers": 0}, env)
        results["ferry_slow_w0"] = child(FERRY, {"url": f"s3://{bucket}/bench-shards/train", "workers": 0}, slow)
        # Both batched inside the workers (one DataLoader message per 32 samples).
        results["ferry_local_b32"] = child(FERRY, {"url": str(work / "shards" / "train"), "batch": 32}, env)
        results["tarfile_local_b32"] = child(TARFILE, {"where": "local", "shards": local_shards, "bucket": bucket, "batch": 32}, env)
        results["ferry_s3_b32"] = child(FERRY, {"url": f"s3://{bucket}/bench-shards/train", "batch": 32}, env)
        results["tarfile_s3_b32"] = child(TARFILE, {"where": "s3", "shards": s3_shards, "bucket": bucket, "batch": 32}, env)
        print("3. training loop, 10 ms steps: local shards vs slow-NAS shards", flush=True)
        results["train_local"] = child(TRAIN, {"url": str(work / "shards" / "train"), "steps": a.train_steps}, env)
        results["train_slow"] = child(TRAIN, {"url": f"s3://{bucket}/bench-shards/train", "steps": a.train_steps}, slow)
        results["train_local_w0"] = child(TRAIN, {"url": str(work / "shards" / "train"), "steps": a.train_steps, "workers": 0}, env)
        results["train_slow_w0"] = child(TRAIN, {"url": f"s3://{bucket}/bench-shards/train", "steps": a.train_steps, "workers": 0}, slow)
    finally:
        proxy.terminate()

    def row(name, r):
        return (f"| {name} | {r['samples']} | {r['seconds']:.1f} | {r['rate']:.0f} | "
                f"{r['rss_mib']:.0f} / {r['child_rss_mib']:.0f} |")
    print(f"\n{a.files} samples of {a.size // 1024} KiB; DataLoader(num_workers=2)\n")
    print("| case | samples | s | samples/s | peak RSS MiB (main / worker) |\n|---|---|---|---|---|")
    for k, r in results.items():
        if not k.startswith("train"):  # noqa: SIM102
            print(row(k, r))
    print(f"\n1. slow NAS: shards / loose = {results['ferry_slow']['rate'] / results['loose_slow']['rate']:.1f}x (target >= 20x)")
    print(f"2. loader local: ferry / tarfile = {results['ferry_local']['rate'] / results['tarfile_local']['rate']:.2f}x, "
          f"RGW: {results['ferry_s3']['rate'] / results['tarfile_s3']['rate']:.2f}x (target >= 3x; both num_workers=2)")
    best_tar_local = max(results["tarfile_local"]["rate"], results["tarfile_local_w0"]["rate"])
    print(f"   batched(32) in workers: local {results['ferry_local_b32']['rate'] / results['tarfile_local_b32']['rate']:.2f}x, "
          f"RGW {results['ferry_s3_b32']['rate'] / results['tarfile_s3_b32']['rate']:.2f}x")
    print(f"   best settings: local ferry(w0) / best tarfile = {results['ferry_local_w0']['rate'] / best_tar_local:.2f}x, "
          f"RGW ferry(w0) / tarfile(w2) = {results['ferry_s3_w0']['rate'] / results['tarfile_s3']['rate']:.2f}x")
    tl, ts = results["train_local"]["its"], results["train_slow"]["its"]
    print(f"3. training it/s (num_workers=2): local {tl:.1f}, slow NAS {ts:.1f}: slow/local = {ts / tl:.3f} (target within 5%)")
    tl0, ts0 = results["train_local_w0"]["its"], results["train_slow_w0"]["its"]
    print(f"   num_workers=0 (Ferry's own I/O threads): local {tl0:.1f}, slow NAS {ts0:.1f}: slow/local = {ts0 / tl0:.3f}")
    (work / "results.json").write_text(json.dumps(results, indent=2))


def train_only(a, work, bucket, env, slow, rgw):
    """Case 3 alone, a.only_train runs per variant: PyTorch's hand-over vs ferry.data.shared,
    prefetch_shards 2 vs 4, num_workers 2 and 0; the median it/s and slow/local per variant."""
    import statistics
    variants = {"w2": {}, "w2 shared": {"shared": True}, "w2 shared prefetch4": {"shared": True, "prefetch": 4},
                "w0": {"workers": 0}}
    rows = []
    for name, extra in variants.items():
        its = {"local": [], "slow": []}
        for _ in range(a.only_train):
            for where, url, e in (("local", str(work / "shards" / "train"), env),
                                  ("slow", f"s3://{bucket}/bench-shards/train", slow)):
                its[where].append(child(TRAIN, dict(extra, url=url, steps=a.train_steps), e)["its"])
        med = {k: statistics.median(v) for k, v in its.items()}
        rows.append((name, med["local"], med["slow"], med["slow"] / med["local"], its))
        print(f"{name}: local {med['local']:.1f} it/s, slow NAS {med['slow']:.1f} it/s, "
              f"slow/local {med['slow'] / med['local']:.3f}  runs {its}", flush=True)
    print(f"\nload {os.getloadavg()[0]:.1f}\n\n| variant | local it/s | slow NAS it/s | slow/local |\n|---|---:|---:|---:|")
    for name, lo, sl, r, _ in rows:
        print(f"| {name} | {lo:.1f} | {sl:.1f} | {r:.3f} |")


if __name__ == "__main__":
    main()
