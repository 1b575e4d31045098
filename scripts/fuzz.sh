#!/usr/bin/env bash
# Builds the fuzzers of the `clang` preset (clang 19: libFuzzer, ASan/UBSan, -Wthread-safety,
# -Werror) and runs each for SECONDS (default 30) from its seed corpus
# (tests/fuzz/corpus/<name>/, read-only; new inputs go to a temporary directory). A crash, leak,
# sanitizer report or timeout fails with the reproducer's path; once fixed, copy the reproducer
# into the seed corpus so it stays a regression input.
#   bash scripts/fuzz.sh [SECONDS] [NAME...]     names: url tar s3_xml shared_config job_spec
#                                                request_target pypi_simple admission
#   bash scripts/fuzz.sh --build-only            only build them (scripts/test.sh, beside ctest)
# The fuzzers run one per core at a time, each for its full SECONDS.
set -euo pipefail
cd "$(dirname "$0")/.."
build_only=0
if [[ ${1:-} == --build-only ]]; then
  build_only=1
  shift
fi
secs=${1:-30}
shift || true
names=("$@")
((${#names[@]})) || names=(url tar s3_xml shared_config job_spec request_target pypi_simple admission)
cmake --preset clang >/dev/null
# The thread-safety analysis of every library is scripts/thread_safety.py (front end only, no
# build); here only the fuzzers and the libraries they link are compiled.
cmake --build --preset clang --target "${names[@]/%/_fuzzer}"
echo "fuzz.sh: clang build took $SECONDS s"
((build_only)) && exit 0
out=$(mktemp -d /tmp/ferry-fuzz.XXXXXX)
# One fuzzer per core at a time (each is one process on one core, for its full SECONDS), so the
# eight take 2 x 4 x SECONDS on 2 cores instead of 8 x SECONDS.
parallel=${FERRY_FUZZ_JOBS:-$(nproc)}
fuzz_one() {  # fuzz_one NAME: runs it; its verdict goes to $out/NAME.rc
  local n=$1 rc=0
  mkdir -p "$out/$n"
  "build/clang/tests/fuzz/${n}_fuzzer" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$out/$n/" -print_final_stats=1 "$out/$n" "tests/fuzz/corpus/$n" \
    >"$out/$n.log" 2>&1 || rc=$?
  echo "$rc" >"$out/$n.rc"
}
for n in "${names[@]}"; do
  while (($(jobs -rp | wc -l) >= parallel)); do wait -n || true; done
  fuzz_one "$n" &
done
wait
failed=0
for n in "${names[@]}"; do
  if [[ $(cat "$out/$n.rc") != 0 ]]; then
    tail -40 "$out/$n.log"
    echo "fuzz: $n FAILED; reproducer in $out/$n/ (full log $out/$n.log)" >&2
    failed=1
    continue
  fi
  runs=$(awk '/stat::number_of_executed_units/ {print $2}' "$out/$n.log")
  echo "fuzz: $n: ${runs:-?} inputs in ${secs} s, no findings"
done
((failed == 0)) || exit 1
rm -rf "$out"
