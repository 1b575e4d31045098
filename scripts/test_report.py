#!/usr/bin/env python3
"""What a test run cost: the number of tests run and the slowest ones, from the JUnit XML that
the run left in a results directory (ctest's --output-junit file, each gtest binary's
--gtest_output=xml file and each pytest file's --junitxml file; scripts/test.sh sets them up).

  /usr/bin/python3 scripts/test_report.py RESULTS_DIR [N]      (N: how many, default 15)

Prints the counts (ctest entries, gtest cases, pytest cases passed/skipped/failed), the N slowest
ctest entries (a test binary, a pytest file, a fixture) and the N slowest single tests (a gtest
case or a pytest test). A report only: it never fails a run for being slow.
"""
import pathlib
import sys
import xml.etree.ElementTree as ET


def cases(path, qualified=True):
    """(name, seconds, outcome) of every <testcase> in one JUnit file; the name with its
    classname (gtest's suite) in front when qualified."""
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError):
        return []  # a binary killed mid-run leaves no or half a file; ctest reports that failure
    out = []
    for tc in root.iter("testcase"):
        name = tc.get("name", "")
        if qualified and tc.get("classname"):
            name = f"{tc.get('classname')}.{name}"
        if tc.find("failure") is not None or tc.find("error") is not None:
            outcome = "failed"
        elif tc.find("skipped") is not None or tc.get("result") == "suppressed" \
                or tc.get("status") == "notrun":
            outcome = "skipped"
        else:
            outcome = "passed"
        out.append((name, float(tc.get("time") or 0), outcome))
    return out


def tally(rows):
    counts = {"passed": 0, "skipped": 0, "failed": 0}
    for _, _, outcome in rows:
        counts[outcome] += 1
    return counts


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    results = pathlib.Path(sys.argv[1])
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    entries = cases(results / "ctest.xml", qualified=False)
    gtest, pytest = [], []
    for f in sorted(results.glob("gtest/*.xml")):
        gtest += [(f"{f.stem}: {name}", t, o) for name, t, o in cases(f)]
    for f in sorted(results.glob("pytest/*.xml")):
        pytest += [(f"{f.stem}: {name}", t, o) for name, t, o in cases(f, qualified=False)]
    g, p = tally(gtest), tally(pytest)
    print(f"test report: {len(entries)} ctest entries; gtest {g['passed']} passed, "
          f"{g['failed']} failed, {g['skipped']} skipped; pytest {p['passed']} passed, "
          f"{p['failed']} failed, {p['skipped']} skipped")
    total = sum(t for _, t, _ in entries)
    print(f"slowest {n} ctest entries (of {total:.0f} s run, over all jobs):")
    for name, t, _ in sorted(entries, key=lambda r: -r[1])[:n]:
        print(f"  {t:7.1f} s  {name}")
    print(f"slowest {n} single tests:")
    for name, t, _ in sorted(gtest + pytest, key=lambda r: -r[1])[:n]:
        print(f"  {t:7.1f} s  {name}")


if __name__ == "__main__":
    main()
