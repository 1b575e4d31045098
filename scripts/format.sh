#!/usr/bin/env bash
# clang-format every C++ file (Google style, 100 columns; see .clang-format).
#   scripts/format.sh          rewrite files in place
#   scripts/format.sh --check  fail if any file is not formatted
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files --cached --others --exclude-standard '*.cc' '*.h')
if [[ "${1:-}" == "--check" ]]; then
  clang-format --dry-run --Werror "${files[@]}" && echo "format: ${#files[@]} files clean"
else
  clang-format -i "${files[@]}"
fi
