#!/usr/bin/env bash
# Installs what is missing, builds ferry with ASan/UBSan and warnings as errors, and runs every
# test that is not labelled slow: unit tests, the Store conformance suite on every backend,
# integration tests against a real Ceph RGW that the test fixture starts, then each fuzzer for
# 30 s (clang build with the thread-safety analysis). Run as root from the repository root:
#   bash scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
export AWS_EC2_METADATA_DISABLED=true  # tests never probe a real metadata service
cmake --preset ci >/dev/null
cmake --build --preset ci
bash scripts/format.sh --check
ctest --preset ci --no-tests=error -j2
# libFuzzer targets (URL, tar, S3/STS XML, AWS config, job spec) for a bounded time each, built
# by clang with ASan/UBSan and the thread-safety analysis; FERRY_FUZZ_SECONDS=0 skips them.
if [[ ${FERRY_FUZZ_SECONDS:-30} != 0 ]]; then
  bash scripts/fuzz.sh "${FERRY_FUZZ_SECONDS:-30}"
fi
