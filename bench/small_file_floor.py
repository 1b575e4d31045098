"""The kernel's share of a small-file download: what creating N files of SIZE bytes costs, with
no network and no copy tool, in the three ways a tool can create them. Issue 16 asks Ferry's CPU
per small object to be at most half of rclone's; this says how much of any tool's CPU is the
filesystem's, which no client removes.

  ferry    open(O_TMPFILE), write, fsync, linkat: Ferry's way (a file is named only once its
           bytes are on disk, so no half-written file ever looks complete)
  unsynced open(O_TMPFILE), write, linkat: the same without the fsync
  plain    open(O_CREAT), write, close: rclone's and aws-cli's way

CPU is system-wide busy time from /proc/stat over the span, which ends with sync(2), so the
kernel's writeback threads are counted for every variant (run it on an otherwise idle machine).
Before each variant the directory is deleted and the script waits 12 s: ext4 without a journal
skips inodes freed in the last 5-10 s when it allocates new ones, a cost of the benchmark's own
deletions, not of the variant.

  /usr/bin/python3 bench/small_file_floor.py DIR [--files 2000] [--size 65536] [--repeats 3]
"""
import argparse
import ctypes
import os
import shutil
import statistics
import time

LIBC = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, AT_SYMLINK_FOLLOW = -100, 0x400


def busy_seconds():
    with open("/proc/stat") as f:
        ticks = [int(x) for x in f.readline().split()[1:]]
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")  # less idle, iowait


def link_fd(fd, path):
    """linkat(2) of an O_TMPFILE descriptor to a name (os.link does not follow /proc links)."""
    if LIBC.linkat(AT_FDCWD, f"/proc/self/fd/{fd}".encode(), AT_FDCWD, path.encode(),
                   AT_SYMLINK_FOLLOW) != 0:
        raise OSError(ctypes.get_errno(), f"linkat {path}")


def create(kind, directory, files, data):
    for i in range(files):
        path = f"{directory}/f{i}"
        if kind == "plain":
            fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
        else:
            fd = os.open(directory, os.O_TMPFILE | os.O_WRONLY, 0o644)
        os.write(fd, data)
        if kind == "ferry":
            os.fsync(fd)
        if kind != "plain":
            link_fd(fd, path)
        os.close(fd)


def measure(kind, directory, files, data):
    shutil.rmtree(directory, ignore_errors=True)
    os.makedirs(directory)
    os.sync()
    time.sleep(12)
    cpu0, t0 = busy_seconds(), time.monotonic()
    create(kind, directory, files, data)
    os.sync()
    cpu, wall = busy_seconds() - cpu0, time.monotonic() - t0
    shutil.rmtree(directory, ignore_errors=True)
    return cpu, wall


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir", help="a directory on the filesystem to measure (created, then deleted)")
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--size", type=int, default=65536)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    data = os.urandom(args.size)
    kinds = ("ferry", "unsynced", "plain")
    runs = {k: [] for k in kinds}
    for _ in range(args.repeats):
        for kind in kinds:  # alternated, so a noisy minute is shared
            runs[kind].append(measure(kind, args.dir, args.files, data))
    print(f"{args.files} files of {args.size} bytes in {args.dir}; median of {args.repeats}")
    print("| variant | CPU s (system-wide) | per 1,000 files | wall s | CPU runs |")
    print("|---|---:|---:|---:|---|")
    for kind in kinds:
        cpu = statistics.median(c for c, _ in runs[kind])
        wall = statistics.median(w for _, w in runs[kind])
        print(f"| {kind} | {cpu:.2f} | {cpu * 1000 / args.files:.3f} | {wall:.2f} | "
              f"{[round(c, 2) for c, _ in runs[kind]]} |")


if __name__ == "__main__":
    main()
