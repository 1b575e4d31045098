#!/usr/bin/env python3
"""ferry mount vs s3fs vs rclone mount (VFS cache mode full) on the same RGW bucket and data,
plus `ferry cp` of the big object as the ceiling (issue 6). One run per cell, caches dropped
before each case, a fresh mount per case.

 1. sequential read of a 2 GiB file (dd bs=1M)
 2. 4 KiB random reads in that file (fio psync, 4 jobs, 15 s): IOPS
(ferry-cache = ferry mount with a cold --cache-dir: random access fills it with the object)
 3. find + stat over 10,000 objects
 4. open + read + close of 10,000 files of 64 KiB

  /usr/bin/python3 bench/mount_read.py [--workdir .bench/mount] [--big-mib 2048] [--small 10000]
Needs build/release, s3fs, rclone, fio (scripts/install-deps.sh --bench).
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


def drop_caches():
    subprocess.run(["sync"])
    pathlib.Path("/proc/sys/vm/drop_caches").write_text("3\n")


def daemon_pid(mnt):
    out = subprocess.run(["pgrep", "-f", f"{mnt}"], capture_output=True, text=True).stdout.split()
    pids = [int(p) for p in out if int(p) != os.getpid()]
    return pids[0] if pids else None


def peak_rss_mib(pid):
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


class Mounter:
    def __init__(self, rgw, env, ferry, work):
        self.rgw, self.env, self.ferry, self.work = rgw, env, ferry, work
        pw = work / "s3fs.passwd"
        pw.write_text(f"{rgw.env['FERRY_TEST_S3_ACCESS_KEY']}:{rgw.env['FERRY_TEST_S3_SECRET_KEY']}\n")
        pw.chmod(0o600)
        self.passwd = pw

    def mount(self, tool, mnt):
        mnt.mkdir(parents=True, exist_ok=True)
        b = self.rgw.bucket
        if tool == "ferry":
            cmd = [self.ferry, "mount", f"s3://{b}/bench-mount/", str(mnt), "--read-only"]
        elif tool == "ferry-cache":  # with a (cold) disk block cache
            cache = self.work / "ferry-cache"
            subprocess.run(["rm", "-rf", str(cache)])
            cmd = [self.ferry, "mount", f"s3://{b}/bench-mount/", str(mnt), "--read-only",
                   "--cache-dir", str(cache), "--cache-size", "8G"]
        elif tool == "s3fs":
            cmd = ["s3fs", f"{b}:/bench-mount", str(mnt), "-o", f"url={self.rgw.endpoint}",
                   "-o", "use_path_request_style", "-o", f"passwd_file={self.passwd}", "-o", "ro",
                   "-o", "parallel_count=16", "-o", "multireq_max=32"]
        else:
            cache = self.work / "rclone-cache"
            cmd = ["rclone", "mount", f"rgw:{b}/bench-mount", str(mnt), "--daemon", "--read-only",
                   "--vfs-cache-mode", "full", "--cache-dir", str(cache), "--vfs-read-chunk-size", "8M",
                   "--buffer-size", "32M", "--dir-cache-time", "5m"]
        subprocess.run(cmd, env=self.env, check=True)
        for _ in range(100):
            if os.path.ismount(mnt):
                break
            time.sleep(0.1)
        return daemon_pid(mnt)

    def umount(self, tool, mnt):
        subprocess.run(["fusermount3", "-u", "-z", str(mnt)], capture_output=True)
        time.sleep(0.5)
        if tool == "rclone":
            subprocess.run(["rm", "-rf", str(self.work / "rclone-cache")])
        if tool == "ferry-cache":
            subprocess.run(["rm", "-rf", str(self.work / "ferry-cache")])


def case_seq(mnt, size):
    t = time.perf_counter()
    subprocess.run(["dd", f"if={mnt}/big.bin", "of=/dev/null", "bs=1M"], check=True, capture_output=True)
    return {"mib_s": size / (1 << 20) / (time.perf_counter() - t)}


def case_rand(mnt, size):
    p = subprocess.run(["fio", "--name=rand", f"--filename={mnt}/big.bin", "--rw=randread", "--bs=4k",
                        f"--size={size}", "--runtime=15", "--time_based", "--ioengine=psync", "--numjobs=4",
                        "--group_reporting", "--readonly", "--output-format=json"],
                       check=True, capture_output=True, text=True)
    j = json.loads(p.stdout[p.stdout.index("{"):])
    return {"iops": j["jobs"][0]["read"]["iops"]}


def case_find_stat(mnt, n):
    t = time.perf_counter()
    count = 0
    for root, _, files in os.walk(mnt / "small"):
        for f in files:
            os.stat(os.path.join(root, f))
            count += 1
    assert count == n, count
    return {"seconds": time.perf_counter() - t}


def case_open_read(mnt, n):
    names = [f"{i:05d}.bin" for i in range(n)]
    t = time.perf_counter()
    for name in names:
        with open(mnt / "small" / name, "rb") as f:
            f.read()
    return {"seconds": time.perf_counter() - t}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workdir", default=str(ROOT / ".bench/mount"))
    ap.add_argument("--rgw-dir", default=str(ROOT / ".bench/shards/rgw"))
    ap.add_argument("--big-mib", type=int, default=2048)
    ap.add_argument("--small", type=int, default=10000)
    ap.add_argument("--tools", default="ferry,ferry-cache,s3fs,rclone")
    ap.add_argument("--cases", default="seq,rand,find_stat,open_read", help="which cases to run")
    a = ap.parse_args()
    work = pathlib.Path(a.workdir)
    work.mkdir(parents=True, exist_ok=True)
    ferry = benchlib.ferry_binary()
    rgw = benchlib.Rgw(pathlib.Path(a.rgw_dir), bluestore_gib=12)
    env = rgw.client_env()
    b = rgw.bucket
    size = a.big_mib << 20
    data = work / "data"
    if not (data / "small" / f"{a.small - 1:05d}.bin").exists():
        (data / "small").mkdir(parents=True, exist_ok=True)
        with open(data / "big.bin", "wb") as f:
            for _ in range(a.big_mib):
                f.write(os.urandom(1 << 20))
        for i in range(a.small):
            (data / "small" / f"{i:05d}.bin").write_bytes(os.urandom(64 << 10))
    print("uploading ...", flush=True)
    subprocess.run([ferry, "cp", "-r", str(data), f"s3://{b}/bench-mount/"], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    m = Mounter(rgw, env, ferry, work)
    results = {}
    drop_caches()
    t = time.perf_counter()
    subprocess.run([ferry, "cp", "--no-skip", f"s3://{b}/bench-mount/big.bin", "/dev/shm/ferry-bench-big.bin"],
                   env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    results["ferry cp"] = {"seq": {"mib_s": size / (1 << 20) / (time.perf_counter() - t)}}
    os.unlink("/dev/shm/ferry-bench-big.bin")
    cases = [("seq", lambda mnt: case_seq(mnt, size)), ("rand", lambda mnt: case_rand(mnt, size)),
             ("find_stat", lambda mnt: case_find_stat(mnt, a.small)),
             ("open_read", lambda mnt: case_open_read(mnt, a.small))]
    cases = [c for c in cases if c[0] in a.cases.split(",")]
    for tool in a.tools.split(","):
        results[tool] = {}
        rss = 0.0
        for name, fn in cases:
            mnt = work / f"mnt-{tool}"
            drop_caches()
            pid = m.mount(tool, mnt)
            try:
                print(f"{tool}: {name} ...", flush=True)
                results[tool][name] = fn(mnt)
                rss = max(rss, peak_rss_mib(pid) if pid else 0)
            finally:
                m.umount(tool, mnt)
        results[tool]["rss_mib"] = rss
        print(json.dumps(results[tool]), flush=True)
    (work / "results.json").write_text(json.dumps(results, indent=2))
    tools = a.tools.split(",")

    def cell(tool, case, field, fmt):
        v = results[tool].get(case, {}).get(field)
        return "-" if v is None else format(v, fmt)

    print("\n| tool | seq read MiB/s | 4K random IOPS | find+stat 10k s | open+read 10k s | daemon peak RSS MiB |")
    print("|---|---:|---:|---:|---:|---:|")
    for tool in tools:
        print(f"| {tool} | {cell(tool, 'seq', 'mib_s', '.0f')} | {cell(tool, 'rand', 'iops', ',.0f')} | "
              f"{cell(tool, 'find_stat', 'seconds', '.2f')} | {cell(tool, 'open_read', 'seconds', '.2f')} | "
              f"{results[tool]['rss_mib']:.0f} |")
    print(f"| ferry cp (ceiling) | {results['ferry cp']['seq']['mib_s']:.0f} | | | | |")
    higher = {"seq": "mib_s", "rand": "iops"}  # bigger is better; the others are seconds
    for ours in [t for t in tools if t.startswith("ferry")]:
        for peer in [t for t in tools if not t.startswith("ferry")]:
            ratios = []
            for case, _ in cases:
                o, p = results[ours].get(case), results[peer].get(case)
                if not o or not p:
                    continue
                field = higher.get(case, "seconds")
                r = o[field] / p[field] if case in higher else p[field] / o[field]
                ratios.append(f"{case} {r:.2f}x")
            print(f"{ours} vs {peer}: " + ", ".join(ratios))
    if "ferry" in results and "seq" in results["ferry"]:
        print(f"ferry mount seq / ferry cp = {results['ferry']['seq']['mib_s'] / results['ferry cp']['seq']['mib_s']:.2f}")

if __name__ == "__main__":
    main()
