#!/usr/bin/env python3
"""Benchmark (issue 10): walking and planning a big tree with bounded memory, ferry vs rclone.

  /usr/bin/python3 bench/tree_listing.py [--files 200000] [--repeats 1]

A local tree of FILES small files (500 per directory) is copied local -> local; then the same
copy runs again with every file unchanged (pure listing + destination join + skip checks), and
once more from a tree whose every directory also holds symbolic-link loops (`l1 -> .`,
`l2 -> .`): before the link rule, such a tree grew without end. Each tool copies into its own
destination. Reported: seconds and peak RSS, with Ferry's ratio to the peer. FERRY_OLD_BIN adds
an older ferry build as a second row (e.g. the commit before the streaming planner).
"""
import argparse
import os
import pathlib
import shutil

from benchlib import ROOT, ferry_binary, measure, print_table

PER_DIR = 500


def make_tree(root, files, loops):
    marker = root.parent / f".{root.name}-complete-{files}-{loops}"
    if marker.exists():
        return
    shutil.rmtree(root, ignore_errors=True)
    for i in range(files):
        d = root / f"d{i // PER_DIR:04d}"
        if i % PER_DIR == 0:
            d.mkdir(parents=True)
            if loops:
                (d / "l1").symlink_to(".")
                (d / "l2").symlink_to(".")
        (d / f"f{i:07d}.bin").write_bytes(b"x" * 100)
    marker.touch()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=200000)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--work", default=str(ROOT / ".bench" / "tree-listing"))
    a = ap.parse_args()
    work = pathlib.Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    tools = {"ferry": ferry_binary()}
    if os.environ.get("FERRY_OLD_BIN"):
        tools["ferry (old)"] = os.environ["FERRY_OLD_BIN"]

    def cmd(tool, src, dst):
        if tool.startswith("ferry"):
            return [tools[tool], "cp", "-r", "--no-progress", str(src), str(dst)]
        # rclone: skips links (no -L) with a notice, like ferry's default; compares size+time.
        return ["rclone", "copy", "--transfers", "16", "--checkers", "16", str(src), str(dst)]

    src = work / "src"
    make_tree(src, a.files, loops=False)
    names = list(tools) + ["rclone"]
    for phase, title in (("first", "first copy, local -> local"),
                         ("again", "second copy, every file unchanged")):
        results = []
        for tool in names:
            dst = work / f"dst-{tool.replace(' ', '_').replace('(', '').replace(')', '')}"
            before = (lambda d=dst: shutil.rmtree(d, ignore_errors=True)) if phase == "first" else None
            results.append(measure(tool, cmd(tool, src, dst), env, a.repeats, before))
        print_table(f"{title} ({a.files:,} files)", a.files, results, unit=1, rate_name="files/s")

    loops = work / "src-loops"
    make_tree(loops, a.files // 4, loops=True)
    results = []
    for tool in [t for t in names if t != "ferry (old)"]:  # the old build never finishes here
        dst = work / f"dst-loops-{tool}"
        results.append(measure(tool, cmd(tool, loops, dst), env, a.repeats,
                               lambda d=dst: shutil.rmtree(d, ignore_errors=True)))
    print_table(f"a tree with two link loops in every directory ({a.files // 4:,} files)",
                a.files // 4, results, unit=1, rate_name="files/s")


if __name__ == "__main__":
    main()
