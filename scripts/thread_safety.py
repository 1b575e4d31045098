#!/usr/bin/env python3
"""clang's thread-safety analysis (-Wthread-safety, as errors) over every library and program
source under src/ (not the *_test.cc files), without building them: the analysis is part of
clang's front end, so each translation unit is checked with -fsyntax-only from the `clang`
preset's compile_commands.json, about four times faster than compiling it with ASan. The preset
is a unity build like `ci` (cmake/unity.cmake): a translation unit is a batch of a target's
sources, and one is checked when it holds a library or program source. The fuzzers (the other
half of the clang preset's work, scripts/fuzz.sh) are built and run separately; what that build
just compiled is not checked again (built_since).

  /usr/bin/python3 scripts/thread_safety.py [--built-since EPOCH] [FILE_SUBSTRING...]
  (from the repository root; --built-since: skip what a successful clang build since then wrote)

Configures the preset first; exits 1 with clang's messages for every unit that fails.
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


def sources(path):
    """The source files a compile command compiles: a unity batch's includes, or the file."""
    if "/Unity/unity_" not in path:
        return [path]
    text = pathlib.Path(path).read_text()
    return re.findall(r'^#include "([^"]+)"$', text, re.M)


def commands():
    """The preset's compile commands for translation units that hold a src/ library or program
    source (not tests, not generated sources), each turned into a -fsyntax-only check: tuples of
    (sources, directory, argv, the object file ninja would build)."""
    # Configured every time (seconds when it is already): a source added since is listed too.
    subprocess.run(["cmake", "--preset", "clang"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    db = ROOT / "build/clang/compile_commands.json"
    src = str(ROOT / "src") + os.sep
    for entry in json.loads(db.read_text()):
        files = sources(entry["file"])
        if not any(f.startswith(src) and not f.endswith("_test.cc") for f in files):
            continue
        argv = entry.get("arguments") or shlex.split(entry["command"])
        output = None
        if "-o" in argv:  # no object file: -fsyntax-only writes nothing
            i = argv.index("-o")
            output = argv[i + 1]  # CMake 3.25's database has no "output" field
            argv = argv[:i] + argv[i + 2:]
        if "-Wthread-safety" not in argv:
            sys.exit(f"thread_safety: {entry['file']} is compiled without -Wthread-safety "
                     "(the clang preset sets FERRY_THREAD_SAFETY)")
        yield files, entry["directory"], argv + ["-fsyntax-only"], entry.get("output", output)


def built_since(jobs, since):
    """The jobs whose object file the `clang` build wrote at or after `since` (a time.time()):
    when that build succeeded, it compiled them with this very command, -Wthread-safety and
    -Werror, so they pass already (scripts/test.sh builds the fuzzers' libraries first). A unit
    that build did not recompile is checked again: `ninja -n` cannot say what is up to date
    here (with CONFIGURE_DEPENDS globs its dry run always stops at re-running CMake)."""
    done = set()
    for i, (_, directory, _, out) in enumerate(jobs):
        try:
            if out and os.stat(os.path.join(directory, out)).st_mtime >= since:
                done.add(i)
        except FileNotFoundError:
            pass
    return done


def check(job):
    files, directory, argv, _ = job
    r = subprocess.run(argv, cwd=directory, capture_output=True, text=True)
    return files, r.returncode, r.stderr


def main():
    args = sys.argv[1:]
    since = None
    if args[:1] == ["--built-since"] and len(args) >= 2:
        since, args = float(args[1]), args[2:]
    jobs = [j for j in commands() if not args or any(s in f for s in args for f in j[0])]
    if not jobs:
        sys.exit("thread_safety: no source file matched")
    done = built_since(jobs, since) if since is not None else set()
    skipped = sum(len(j[0]) for i, j in enumerate(jobs) if i in done)
    jobs = [j for i, j in enumerate(jobs) if i not in done]
    start = time.monotonic()
    failed = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        for files, rc, err in pool.map(check, jobs):
            if rc != 0:
                failed.append(files)
                print(err, end="", file=sys.stderr)
    took = time.monotonic() - start
    if failed:
        names = [os.path.relpath(f, ROOT) for files in failed for f in files]
        print(f"thread_safety: {len(failed)} of {len(jobs)} translation units fail the analysis "
              f"({', '.join(names)})", file=sys.stderr)
        sys.exit(1)
    print(f"thread_safety: {len(jobs)} translation units ({sum(len(j[0]) for j in jobs)} files) "
          f"clean ({took:.0f} s), {len(done)} more ({skipped} files) passed it in the clang build")


if __name__ == "__main__":
    main()
