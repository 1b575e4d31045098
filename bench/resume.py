#!/usr/bin/env python3
"""Benchmark (issue 12): bringing a job's newest checkpoint back after preemption.

  /usr/bin/python3 bench/resume.py [--repeats 3] [--model-mib 1024] [--shards 8] [--shard-mib 64]

Ferry: `ferry run --no-preflight --resume DIR --out ...{job}/{attempt}/ -- true` (counts the
attempt, reads the job's latest pointer and manifest, copies the set into DIR checking every
file's size and CRC32C, runs the command, writes the new attempt's manifest and pointer).
Peers: the wrapper users write without it: read `latest.json`, then copy the set it names with
`aws s3 cp --recursive` / `aws s3 sync`, or `rclone copy` (no check against the manifest).

Cases: cold (an empty node: everything is downloaded) and warm (the same node restarts: the set
is already in DIR; ferry checks CRC32Cs, aws s3 sync and rclone compare size and time).
The pointer is put back before each run so every run resumes the same set.
"""
import argparse
import json
import os
import shutil
import subprocess

from benchlib import ROOT, Rgw, ferry_binary, measure, print_table

JOB = "bench-resume"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--model-mib", type=int, default=1024)
    ap.add_argument("--shards", type=int, default=8)
    ap.add_argument("--shard-mib", type=int, default=64)
    a = ap.parse_args()
    work = ROOT / ".bench" / "resume"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    rgw = Rgw(ROOT / ".bench" / "rgw-resume", bluestore_gib=16)
    env = rgw.client_env()
    env["FERRY_RUN_ID"] = JOB
    ferry = ferry_binary()
    runs = f"s3://{rgw.bucket}/bench-runs/"
    tmpl = runs + "{job}/{attempt}/"

    # Attempt 0 writes the checkpoint set: one model file and optimizer shards.
    ckpt = work / "ckpt0"
    ckpt.mkdir()
    block = os.urandom(1 << 20)
    with open(ckpt / "model.pt", "wb") as f:
        for i in range(a.model_mib):
            f.write(block[i % 1024:] + block[:i % 1024])
    for s in range(a.shards):
        with open(ckpt / f"optim-{s:02d}.pt", "wb") as f:
            for i in range(a.shard_mib):
                f.write(block[(s + i) % 977:] + block[:(s + i) % 977])
    total = a.model_mib + a.shards * a.shard_mib
    subprocess.run([ferry, "run", "--no-preflight", "--out", f"{ckpt}={tmpl}", "--", "true"],
                   env=env, check=True)
    pointer_url = runs + JOB + "/_ferry/latest.json"
    pointer = subprocess.run([ferry, "cat", pointer_url], env=env, check=True,
                             capture_output=True).stdout
    saved = work / "latest.json"
    saved.write_bytes(pointer)
    set_url = json.loads(pointer)["url"]
    bucket_path = set_url[len("s3://"):]
    print(f"server: Ceph RGW 16 (bluestore) at {rgw.endpoint}; set: {set_url}, "
          f"{total} MiB in {1 + a.shards} files; repeats: {a.repeats}")

    target = work / "resume"

    def restore(empty):
        def before():
            subprocess.run([ferry, "cp", saved, pointer_url], env=env, check=True,
                           stdout=subprocess.DEVNULL)
            if empty:
                shutil.rmtree(target, ignore_errors=True)
                subprocess.run(["sync"], check=True)
                subprocess.run(["sh", "-c", "echo 3 > /proc/sys/vm/drop_caches"], check=False)
        return before

    empty_out = work / "empty-out"
    empty_out.mkdir()
    ferry_cmd = [ferry, "run", "--no-preflight", "--resume", str(target),
                 "--out", f"{empty_out}={tmpl}", "--", "true"]
    read_pointer = (f"aws s3 cp {pointer_url} - | /usr/bin/python3 -c "
                    "'import json,sys; print(json.load(sys.stdin)[\"url\"])'")
    aws_cold = ["sh", "-c", f"set -e; u=$({read_pointer}); "
                f"aws s3 cp --quiet --recursive --exclude '_ferry/*' \"$u\" {target}"]
    aws_warm = ["sh", "-c", f"set -e; u=$({read_pointer}); "
                f"aws s3 sync --quiet --exclude '_ferry/*' \"$u\" {target}"]
    rclone = ["sh", "-c", f"set -e; u=$(rclone cat rgw:{runs[5:]}{JOB}/_ferry/latest.json | "
              "/usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)[\"url\"][5:])'); "
              f"rclone copy --transfers 16 --exclude '_ferry/**' \"rgw:$u\" {target}"]
    for case, empty in (("cold: empty node", True), ("warm: the set is already there", False)):
        results = [
            measure("ferry", ferry_cmd, env, a.repeats, restore(empty)),
            measure("aws-cli", aws_cold if empty else aws_warm, env, a.repeats, restore(empty)),
            measure("rclone", rclone, env, a.repeats, restore(empty)),
        ]
        print_table(f"Resume {total} MiB ({case})", total << 20, results)
    subprocess.run([ferry, "rm", "-r", "-q", runs], env=env, check=False)
    print(f"\n(set was {bucket_path})")


if __name__ == "__main__":
    main()
