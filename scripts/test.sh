#!/usr/bin/env bash
# Installs what is missing, builds ferry with ASan/UBSan and warnings as errors, and runs every
# test that is not labelled slow: unit tests, the Store conformance suite on every backend,
# integration tests against a real Ceph RGW that the test fixture starts, then each fuzzer for
# 30 s (clang build with the thread-safety analysis). Run as root from the repository root:
#   bash scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
phase() {  # phase NAME COMMAND...: runs it and says how long it took (CI's budget is minutes)
  local start=$SECONDS
  "${@:2}"
  echo "test.sh: $1 took $((SECONDS - start)) s (total $SECONDS s)"
}
phase install-deps bash scripts/install-deps.sh
export AWS_EC2_METADATA_DISABLED=true  # tests never probe a real metadata service
cmake --preset ci >/dev/null
phase build cmake --build --preset ci
bash scripts/format.sh --check
phase ctest ctest --preset ci --no-tests=error -j2
# libFuzzer targets (URL, tar, S3/STS XML, AWS config, job spec) for a bounded time each, built
# by clang with ASan/UBSan and the thread-safety analysis; FERRY_FUZZ_SECONDS=0 skips them.
if [[ ${FERRY_FUZZ_SECONDS:-30} != 0 ]]; then
  phase clang-build-and-fuzz bash scripts/fuzz.sh "${FERRY_FUZZ_SECONDS:-30}"
fi
