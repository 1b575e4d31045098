#!/usr/bin/env bash
# Installs what is missing, builds ferry with ASan/UBSan and warnings as errors, and runs every
# test that is not labelled slow: unit tests, the Store conformance suite on every backend,
# integration tests against a real Ceph RGW that the test fixture starts, clang's thread-safety
# analysis of every library, then each fuzzer for 30 s (clang build). Run as root from the
# repository root:
#   bash scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
phase() {  # phase NAME COMMAND...: runs it and says how long it took (CI's budget is minutes)
  local start=$SECONDS rc=0
  "${@:2}" || rc=$?
  echo "test.sh: $1 took $((SECONDS - start)) s (total $SECONDS s)"
  return $rc
}
phase install-deps bash scripts/install-deps.sh
export AWS_EC2_METADATA_DISABLED=true  # tests never probe a real metadata service
cmake --preset ci >/dev/null
phase build cmake --build --preset ci
bash scripts/format.sh --check
ctest_rc=0
phase ctest ctest --preset ci --no-tests=error -j2 || ctest_rc=$?
if [[ $ctest_rc != 0 ]]; then
  # CI keeps only the end of this output: say there what failed and why (pytest's one-line
  # summaries and assertion lines, gtest's failures), the full text being further up.
  echo "test.sh: failures, in short:"
  grep -E '^(FAILED|ERROR) |^E  |\[  FAILED  \]|Failure$|^[^ ]+:[0-9]+: (Failure|error)' \
    build/ci/Testing/Temporary/LastTest.log | grep -v '^E  *$' | tail -n 40 || true
  exit $ctest_rc
fi
# clang's -Wthread-safety over every source under src/ (front end only: -fsyntax-only, about a
# quarter of compiling them), then the libFuzzer targets (URL, tar, S3/STS XML, AWS config, job
# spec, request target, PyPI page) for a bounded time each, built by clang with ASan/UBSan;
# FERRY_FUZZ_SECONDS=0 skips the fuzzers.
phase thread-safety /usr/bin/python3 scripts/thread_safety.py
if [[ ${FERRY_FUZZ_SECONDS:-30} != 0 ]]; then
  phase clang-build-and-fuzz bash scripts/fuzz.sh "${FERRY_FUZZ_SECONDS:-30}"
fi
