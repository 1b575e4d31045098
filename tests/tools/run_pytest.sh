#!/usr/bin/env bash
# Runs one pytest file with Debian's python. pytest's exit code 5 ("no tests collected") is
# turned into a loud failure so a file whose tests all vanished can never pass silently.
# With FERRY_TEST_RESULTS set (ctest sets it), each test's result and time also go to
# $FERRY_TEST_RESULTS/pytest/<file>.xml (JUnit) for scripts/test_report.py.
set -uo pipefail
junit=()
if [[ -n ${FERRY_TEST_RESULTS:-} ]]; then
  last=${*: -1}
  name=$(basename "${last%.py}")
  [[ $* == *"-m slow"* ]] && name=slow
  mkdir -p "$FERRY_TEST_RESULTS/pytest"
  junit=(--junitxml="$FERRY_TEST_RESULTS/pytest/$name.xml")
fi
/usr/bin/python3 -m pytest -q -p no:cacheprovider "${junit[@]}" "$@"
rc=$?
if [[ $rc -eq 5 ]]; then
  echo "run_pytest: pytest collected no tests from $* (exit 5); failing on purpose" >&2
  exit 1
fi
exit $rc
