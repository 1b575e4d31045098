#!/usr/bin/env bash
# Installs what is missing, builds ferry with ASan/UBSan and warnings as errors, and runs every
# test that is not labelled slow: unit tests, the Store conformance suite on every backend,
# integration tests against a real Ceph RGW that the test fixture starts, clang's thread-safety
# analysis of every library, then each fuzzer for 30 s (clang build). Run as root from the
# repository root:
#   bash scripts/test.sh            everything, as CI runs it (.ci/run)
#   bash scripts/test.sh --quick    between changes: the build, the unit tests and the quick
#                                   integration tier (ctest label `quick`), no clang passes
# Each phase says what it took; the end names the slowest tests (scripts/test_report.py). Where
# the time goes and why it is spent this way: docs/development.md, "What the test command costs".
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
case ${1:-} in
  --quick) quick=1 ;;
  "") ;;
  *) echo "usage: bash scripts/test.sh [--quick]  (unknown argument '$1')" >&2; exit 2 ;;
esac
phases=()
phase() {  # phase NAME COMMAND...: runs it and says how long it took (CI's budget is minutes)
  local start=$SECONDS rc=0
  "${@:2}" || rc=$?
  echo "test.sh: $1 took $((SECONDS - start)) s (total $SECONDS s)"
  phases+=("$1 $((SECONDS - start)) s")
  return $rc
}
results=build/ci/test-results
report() {  # the counts and the slowest tests of this run, then each phase's time
  /usr/bin/python3 scripts/test_report.py "$results" 15 || true
  echo "test.sh: phases: $(IFS=,; echo "${phases[*]}" | sed 's/,/, /g'); total $SECONDS s"
}

phase install-deps bash scripts/install-deps.sh
export AWS_EC2_METADATA_DISABLED=true  # tests never probe a real metadata service
cmake --preset ci >/dev/null
phase build cmake --build --preset ci
bash scripts/format.sh --check

# The clang work (the fuzzers' build, then the thread-safety analysis of what that build did not
# compile: scripts/thread_safety.py) runs beside ctest at the lowest CPU priority: the tests wait
# on sockets, processes and RGW much of the time, and it takes only the cycles they leave idle.
bg_pid=
bg_log=build/ci/clang-passes.log
if ((!quick)); then
  mkdir -p build/ci
  set -m  # its own process group, so that a failing ctest stops all of it
  (
    set -e
    clang_start=$(date +%s)
    phase clang-build nice -n 19 bash scripts/fuzz.sh --build-only
    phase thread-safety nice -n 19 /usr/bin/python3 scripts/thread_safety.py --built-since "$clang_start"
  ) >"$bg_log" 2>&1 &
  bg_pid=$!
  set +m
fi

rm -rf "$results"
mkdir -p "$results"
ctest_args=(--preset ci --no-tests=error -j2 --output-junit "$PWD/$results/ctest.xml")
((quick)) && ctest_args+=(-L 'unit|quick')
ctest_rc=0
phase ctest ctest "${ctest_args[@]}" || ctest_rc=$?
if [[ $ctest_rc != 0 ]]; then
  [[ -n $bg_pid ]] && kill -- "-$bg_pid" 2>/dev/null || true
  # CI keeps only the end of this output: say there what failed and why (pytest's one-line
  # summaries and assertion lines, gtest's failures), the full text being further up.
  echo "test.sh: failures, in short:"
  grep -E '^(FAILED|ERROR) |^E  |\[  FAILED  \]|Failure$|^[^ ]+:[0-9]+: (Failure|error)' \
    build/ci/Testing/Temporary/LastTest.log | grep -v '^E  *$' | tail -n 40 || true
  report
  exit $ctest_rc
fi

if ((!quick)); then
  # What of the clang work is left once ctest is done runs at full speed now.
  bg_rc=0
  phase clang-build-and-thread-safety-rest wait "$bg_pid" || bg_rc=$?
  cat "$bg_log"
  while read -r name secs; do phases+=("$name $secs s (beside ctest)"); done \
    < <(sed -n 's/^test.sh: \([a-z-]*\) took \([0-9]*\) s.*/\1 \2/p' "$bg_log")
  if [[ $bg_rc != 0 ]]; then
    echo "test.sh: the clang build or the thread-safety analysis failed (above)" >&2
    exit $bg_rc
  fi
  # Each libFuzzer target (URL, tar, S3/STS XML, AWS config, job spec, request target, PyPI page,
  # admission) for a bounded time, one per core; FERRY_FUZZ_SECONDS=0 skips them.
  if [[ ${FERRY_FUZZ_SECONDS:-30} != 0 ]]; then
    phase fuzz bash scripts/fuzz.sh "${FERRY_FUZZ_SECONDS:-30}"
  fi
fi
report
