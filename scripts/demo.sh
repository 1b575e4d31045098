#!/usr/bin/env bash
# Installs what is missing, builds ferry (release), and runs its main job on the embedded default
# store: a local directory, no server needed. Run as root from the repository root:
#   bash scripts/demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --build
cmake --preset release >/dev/null
cmake --build --preset release --target ferry
FERRY=$PWD/build/release/src/apps/ferry

demo=$(mktemp -d /tmp/ferry-demo.XXXXXX)
trap 'rm -rf "$demo"' EXIT
mkdir -p "$demo/dataset/images" "$demo/store"
for i in 1 2 3; do head -c $((i * 300000)) /dev/urandom >"$demo/dataset/images/$i.jpg"; done
echo "epoch,loss" >"$demo/dataset/train.csv"

run() { echo "\$ ferry $*"; "$FERRY" "$@"; }
echo "== Stage-in: copy a dataset into a local directory store (atomic, verified length) =="
for f in images/1.jpg images/2.jpg images/3.jpg train.csv; do
  run cp "$demo/dataset/$f" "$demo/store/datasets/demo/$f"
done
echo "== List it =="
run ls -l "$demo/store/datasets/demo"
run ls -r "$demo/store/datasets"
echo "== Inspect one object, read a byte range =="
run stat "$demo/store/datasets/demo/train.csv"
run cat --range 0-4 "$demo/store/datasets/demo/train.csv"; echo
echo "== Errors are one line, name the thing and the cause, exit non-zero =="
run cat "$demo/store/datasets/demo/missing.bin" || echo "(exit $?)"
run ls "s3://bucket/100%" || echo "(exit $?)"
echo "== Clean up =="
run rm -r "$demo/store/datasets/demo"
echo "demo finished: ferry $("$FERRY" --version | cut -d' ' -f2) works on a local store"
