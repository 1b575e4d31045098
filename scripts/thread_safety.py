#!/usr/bin/env python3
"""clang's thread-safety analysis (-Wthread-safety, as errors) over every library and program
source under src/ (not the *_test.cc files), without building them: the analysis is part of
clang's front end, so each file is checked with -fsyntax-only from the `clang` preset's
compile_commands.json, about four times faster than compiling it with ASan. The fuzzers (the
other half of the clang preset's work, scripts/fuzz.sh) are built and run separately.

  /usr/bin/python3 scripts/thread_safety.py [FILE_SUBSTRING...]   (from the repository root)

Configures the preset first; exits 1 with clang's messages for every file that fails.
"""
import concurrent.futures
import json
import os
import pathlib
import re
import shlex
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]


def commands():
    """The preset's compile commands for src/ files (not tests, not generated sources), each
    turned into a -fsyntax-only check."""
    # Configured every time (seconds when it is already): a source added since is listed too.
    subprocess.run(["cmake", "--preset", "clang"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    db = ROOT / "build/clang/compile_commands.json"
    src = str(ROOT / "src") + os.sep
    for entry in json.loads(db.read_text()):
        path = entry["file"]
        if not path.startswith(src) or path.endswith("_test.cc"):
            continue
        argv = entry.get("arguments") or shlex.split(entry["command"])
        if "-o" in argv:  # no object file: -fsyntax-only writes nothing
            i = argv.index("-o")
            argv = argv[:i] + argv[i + 2:]
        if "-Wthread-safety" not in argv:
            sys.exit(f"thread_safety: {path} is compiled without -Wthread-safety "
                     "(the clang preset sets FERRY_THREAD_SAFETY)")
        yield path, entry["directory"], argv + ["-fsyntax-only"], entry.get("output")


def built_clean(jobs):
    """The sources whose object file the preset's own build holds up to date (scripts/fuzz.sh
    builds the fuzzers' libraries): ninja compiled them with this very command, -Wthread-safety
    and -Werror, since they or a header they include last changed, so they pass already; ninja's
    log and depfiles are the cache of this analysis's results."""
    outputs = {entry_output: path for path, _, _, entry_output in jobs if entry_output}
    if not outputs:
        return set()
    r = subprocess.run(["ninja", "-C", str(ROOT / "build/clang"), "-n", *outputs],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return set()  # e.g. no build yet: check everything
    stale = set()
    for line in r.stdout.splitlines():
        m = re.match(r"\[\d+/\d+\] Building CXX object (\S+)$", line)
        if m:
            stale.add(m.group(1))
    return {path for out, path in outputs.items() if out not in stale}


def check(job):
    path, directory, argv, _ = job
    r = subprocess.run(argv, cwd=directory, capture_output=True, text=True)
    return path, r.returncode, r.stderr


def main():
    only = sys.argv[1:]
    jobs = [j for j in commands() if not only or any(s in j[0] for s in only)]
    if not jobs:
        sys.exit("thread_safety: no source file matched")
    done = built_clean(jobs)
    jobs = [j for j in jobs if j[0] not in done]
    start = time.monotonic()
    failed = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        for path, rc, err in pool.map(check, jobs):
            if rc != 0:
                failed.append(path)
                print(err, end="", file=sys.stderr)
    took = time.monotonic() - start
    if failed:
        print(f"thread_safety: {len(failed)} of {len(jobs)} files fail the analysis: "
              + ", ".join(os.path.relpath(p, ROOT) for p in failed), file=sys.stderr)
        sys.exit(1)
    print(f"thread_safety: {len(jobs)} files clean ({took:.0f} s), "
          f"{len(done)} more passed it in the clang build")


if __name__ == "__main__":
    main()
