#!/usr/bin/env bash
# Builds the fuzzers of the `clang` preset (clang 19: libFuzzer, ASan/UBSan, -Wthread-safety,
# -Werror) and runs each for SECONDS (default 30) from its seed corpus
# (tests/fuzz/corpus/<name>/, read-only; new inputs go to a temporary directory). A crash, leak,
# sanitizer report or timeout fails with the reproducer's path; once fixed, copy the reproducer
# into the seed corpus so it stays a regression input.
#   bash scripts/fuzz.sh [SECONDS] [NAME...]     names: url tar s3_xml shared_config job_spec
#                                                request_target pypi_simple admission
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-30}
shift || true
names=("$@")
((${#names[@]})) || names=(url tar s3_xml shared_config job_spec request_target pypi_simple admission)
cmake --preset clang >/dev/null
# The thread-safety analysis of every library is scripts/thread_safety.py (front end only, no
# build); here only the fuzzers and the libraries they link are compiled.
cmake --build --preset clang --target "${names[@]/%/_fuzzer}"
echo "fuzz.sh: clang build took $SECONDS s"
out=$(mktemp -d /tmp/ferry-fuzz.XXXXXX)
for n in "${names[@]}"; do
  mkdir -p "$out/$n"
  if ! "build/clang/tests/fuzz/${n}_fuzzer" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix="$out/$n/" -print_final_stats=1 "$out/$n" "tests/fuzz/corpus/$n" \
      >"$out/$n.log" 2>&1; then
    tail -40 "$out/$n.log"
    echo "fuzz: $n FAILED; reproducer in $out/$n/ (full log $out/$n.log)" >&2
    exit 1
  fi
  runs=$(awk '/stat::number_of_executed_units/ {print $2}' "$out/$n.log")
  echo "fuzz: $n: ${runs:-?} inputs in ${secs} s, no findings"
done
rm -rf "$out"
