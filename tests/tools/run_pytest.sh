#!/usr/bin/env bash
# Runs one pytest file with Debian's python. pytest's exit code 5 ("no tests collected") is
# turned into a loud failure so a file whose tests all vanished can never pass silently.
set -uo pipefail
/usr/bin/python3 -m pytest -q -p no:cacheprovider "$@"
rc=$?
if [[ $rc -eq 5 ]]; then
  echo "run_pytest: pytest collected no tests from $* (exit 5); failing on purpose" >&2
  exit 1
fi
exit $rc
