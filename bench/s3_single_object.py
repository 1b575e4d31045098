#!/usr/bin/env python3
"""Benchmark: one large object uploaded to and downloaded from the same RGW by
ferry cp, aws s3 cp (Debian awscli) and rclone copyto, with peak RSS.

  /usr/bin/python3 bench/s3_single_object.py [--size-mib 1024] [--repeats 3]

Uses an RGW with the bluestore backend in .bench/rgw (started if needed, stopped at the end
unless --keep). Prints a markdown table per direction with ferry's speed-up over each peer.
"""
import argparse
import os
import shutil
import subprocess

from benchlib import ROOT, Rgw, ferry_binary, measure, print_table


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mib", type=int, default=1024)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--keep", action="store_true", help="leave the RGW running")
    a = ap.parse_args()
    work = ROOT / ".bench"
    work.mkdir(exist_ok=True)
    # Room for every tool's copy plus objects awaiting RGW garbage collection.
    rgw = Rgw(work / "rgw", bluestore_gib=max(24, a.size_mib * 12 // 1024 + 8))
    env = rgw.client_env()
    ferry = ferry_binary()
    size = a.size_mib << 20
    src = work / "object.bin"
    if not src.exists() or src.stat().st_size != size:
        with open(src, "wb") as f:
            for _ in range(a.size_mib):
                f.write(os.urandom(1 << 20))
    out = work / "download"
    b = rgw.bucket

    def clean_out():
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir()

    tools = {
        "ferry": (lambda key: [ferry, "cp", str(src), f"s3://{b}/{key}"],
                  lambda key: [ferry, "cp", f"s3://{b}/{key}", str(out / "o.bin")]),
        "aws-cli": (lambda key: ["aws", "s3", "cp", "--only-show-errors", str(src), f"s3://{b}/{key}"],
                    lambda key: ["aws", "s3", "cp", "--only-show-errors", f"s3://{b}/{key}", str(out / "o.bin")]),
        # --ignore-times: rclone would otherwise skip the transfer when size and time match.
        "rclone": (lambda key: ["rclone", "copyto", "--ignore-times", str(src), f"rgw:{b}/{key}"],
                   lambda key: ["rclone", "copyto", "--ignore-times", f"rgw:{b}/{key}", str(out / "o.bin")]),
    }
    print(f"object: {a.size_mib} MiB, repeats: {a.repeats}, server: Ceph RGW 16 (bluestore) at {rgw.endpoint}")
    for tool in tools:
        subprocess.run(["bash", "-c", f"command -v {tools[tool][0]('x')[0]}"], check=True,
                       stdout=subprocess.DEVNULL)
    up = [measure(t, tools[t][0](f"bench/{t}.bin"), env, a.repeats) for t in tools]
    print_table(f"Upload {a.size_mib} MiB (local file -> RGW)", size, up)
    down = [measure(t, tools[t][1](f"bench/{t}.bin"), env, a.repeats, before=clean_out) for t in tools]
    print_table(f"Download {a.size_mib} MiB (RGW -> local file)", size, down)
    shutil.rmtree(out, ignore_errors=True)
    if not a.keep:
        rgw.stop()


if __name__ == "__main__":
    main()
