#!/usr/bin/env python3
"""Benchmark (issue 3): ferry cp vs rclone copy vs aws s3 cp --recursive, upload and download,
on the same RGW and the same data, with peak RSS.

  /usr/bin/python3 bench/s3_tree_copy.py [--cases small,medium,large] [--repeats 1]

Cases: small = 10,000 files of 64 KiB; small2k = 2,000 files of 64 KiB; medium = 200 files of
16 MiB; gib = one 1 GiB file; large = one 4 GiB file. Each table also gives every client's CPU
(user+system seconds of the process and its children, from wait4) per GiB, or per 1,000 objects
for the small cases, and Ferry's CPU relative to the most frugal peer's, and the server's CPU
(RGW, OSD and monitor, which share the clients' cores here) over each run. With --durable each
download ends with sync(2) inside its timed span and the kernel threads' CPU over that span
(the page-cache writeback that rclone and aws-cli leave to the kernel's flusher threads, while
Ferry fsyncs each file in its own threads) is counted for every tool.
RGW uses bluestore in .bench/rgw-tree (sized for the data). Each tool uploads to its own prefix,
then downloads it into an empty directory; prefixes are removed between cases to bound disk use.
Downloads of the small-file cases are moved aside between runs and removed after the case (see
clean_out: deleting thousands of files just before a run inflates the next tool's CPU here).
"""
import argparse
import os
import shutil
import subprocess

from benchlib import ROOT, Rgw, ferry_binary, measure_alternating, print_table

CASES = {
    "small": (10000, 64 << 10),
    "small2k": (2000, 64 << 10),
    "medium": (200, 16 << 20),
    "gib": (1, 1 << 30),
    "large": (1, 4 << 30),
}


def make_data(root, count, size):
    marker = root.parent / f".{root.name}-complete-{count}-{size}"
    if marker.exists():
        return
    marker.unlink(missing_ok=True)
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    block = os.urandom(1 << 20)
    for i in range(count):
        d = root / f"d{i // 1000:02d}"
        d.mkdir(exist_ok=True)
        with open(d / f"f{i:05d}.bin", "wb") as f:
            left, n = size, i
            while left > 0:
                chunk = block[n % 4096:] + block[: n % 4096]
                f.write(chunk[: min(left, len(chunk))])
                left -= min(left, len(chunk))
                n += 1
    marker.touch()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", default="small,medium,large")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--rclone-transfers", default="16,64")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--rgw-dir", help="RGW directory (tests/tools/rgw.sh; default .bench/rgw-tree)")
    ap.add_argument("--ferry-flags", default="", help="extra flags for ferry cp, e.g. '--transfers 32'")
    ap.add_argument("--tools", default="", help="only these tools (comma-separated names as printed)")
    ap.add_argument("--ferry-chunked", action="store_true",
                    help="also ferry with FERRY_S3_BODY_CHECKSUM=chunked (parts in signed chunks)")
    ap.add_argument("--ferry-buffered", action="store_true",
                    help="also ferry with FERRY_DIRECT_IO=off (local writes through the page cache)")
    ap.add_argument("--ferry-baseline", metavar="BINARY",
                    help="also an older ferry binary, as 'ferry baseline' (A/B of a change)")
    ap.add_argument("--durable", action="store_true",
                    help="downloads end with sync(2) inside the timed span, and the kernel "
                         "threads' CPU (writeback the peers leave to the kernel; Ferry fsyncs "
                         "itself) is added to every tool's")
    a = ap.parse_args()
    work = ROOT / ".bench"
    work.mkdir(exist_ok=True)
    rgw = Rgw(a.rgw_dir or work / "rgw-tree", bluestore_gib=48)
    env = rgw.client_env()
    ferry = ferry_binary()
    b = rgw.bucket
    print(f"server: Ceph RGW 16 ({rgw.objectstore}) at {rgw.endpoint}; repeats: {a.repeats}")
    for case in a.cases.split(","):
        count, size = CASES[case]
        src = work / f"tree-{case}"
        make_data(src, count, size)
        total = count * size
        out = work / "tree-out"
        aside = work / "tree-out-aside"
        moved = [0]

        def clean_out():
            # Many small files: moved aside, removed after the case. On this machine's ext4
            # (no journal) a file created within a minute of thousands of deletions in its
            # block group costs far more kernel CPU (the inode allocator skips recently freed
            # inodes, recently_deleted()); removing the last run's tree before each download
            # charged that to whichever tool ran next, and more with every run.
            if count >= 1000 and out.exists():
                aside.mkdir(exist_ok=True)
                moved[0] += 1
                out.rename(aside / str(moved[0]))
            shutil.rmtree(out, ignore_errors=True)

        # --no-skip: repeats re-copy, like the peers' --ignore-times (Ferry would skip unchanged).
        ff = a.ferry_flags.split()

        def ferry_pair(sub, *env, binary=ferry):
            """(upload, download) commands of ferry with `env` settings, under prefix `sub`."""
            cmd = [*(["env", *env] if env else []), binary, "cp", "-r", "--no-progress", "--no-skip", *ff]
            return ([*cmd, str(src), f"s3://{b}/{case}/{sub}/"],
                    [*cmd, f"s3://{b}/{case}/{sub}/", str(out)])

        tools = {"ferry": ferry_pair("ferry"),
                 "aws-cli": (["aws", "s3", "cp", "--recursive", "--only-show-errors", str(src),
                              f"s3://{b}/{case}/aws/"],
                             ["aws", "s3", "cp", "--recursive", "--only-show-errors",
                              f"s3://{b}/{case}/aws/", str(out)])}
        if a.ferry_chunked:  # the same ferry, parts sent in signed chunks (docs/configuration.md)
            tools["ferry chunked"] = ferry_pair("ferrych", "FERRY_S3_BODY_CHECKSUM=chunked")
        if a.ferry_baseline:  # the same runs with another build, for a before/after
            tools["ferry baseline"] = ferry_pair("ferrybase", binary=a.ferry_baseline)
        if a.ferry_buffered:  # the same ferry, big local files through the page cache
            tools["ferry buffered"] = ferry_pair("ferrybuf", "FERRY_DIRECT_IO=off")
        for t in a.rclone_transfers.split(","):
            flags = ["--transfers", t, "--checkers", t, "--ignore-times"]
            tools[f"rclone --transfers {t}"] = (
                ["rclone", "copy", *flags, str(src), f"rgw:{b}/{case}/rclone{t}/"],
                ["rclone", "copy", *flags, f"rgw:{b}/{case}/rclone{t}/", str(out)])
        if a.tools:
            tools = {k: v for k, v in tools.items()
                     if k.startswith("ferry") or k in a.tools.split(",")}
        # Small objects: CPU per 1,000 objects; large ones: per GiB.
        cpu_per = (count / 1000, "CPU s/1k obj") if count >= 1000 else None
        # Upload every tool first, then download, so each download reads its own tool's objects.
        up = measure_alternating({n: c[0] for n, c in tools.items()}, env, a.repeats, server=rgw)
        print_table(f"{case}: upload {count} x {size >> 10} KiB (local -> RGW)", total, up, cpu_per=cpu_per)
        down = measure_alternating({n: c[1] for n, c in tools.items()}, env, a.repeats,
                                   before=clean_out, durable=a.durable, server=rgw)
        print_table(f"{case}: download {count} x {size >> 10} KiB (RGW -> local)", total, down,
                    cpu_per=cpu_per)
        clean_out()
        shutil.rmtree(aside, ignore_errors=True)
        subprocess.run([ferry, "rm", "-r", "-q", f"s3://{b}/{case}/"], env=env, check=False)
    if not a.keep:
        rgw.stop()


if __name__ == "__main__":
    main()
