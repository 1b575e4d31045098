#!/usr/bin/env bash
# Installs what is missing, builds ferry with ASan/UBSan and warnings as errors, and runs every
# test that is not labelled slow: unit tests, the Store conformance suite on every backend, and
# integration tests against a real Ceph RGW that the test fixture starts. Run as root from the
# repository root:
#   bash scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
export AWS_EC2_METADATA_DISABLED=true  # tests never probe a real metadata service
cmake --preset ci >/dev/null
cmake --build --preset ci
bash scripts/format.sh --check
ctest --preset ci --no-tests=error -j2
