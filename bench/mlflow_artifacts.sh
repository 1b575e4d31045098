#!/usr/bin/env bash
# A multi-GiB checkpoint into a local-directory store (issue 14): `ferry serve`'s MLflow multipart
# upload (PARTS parallel curl PUTs of one part each, direct into the store's part writer) vs
# `ferry cp` of the same file into the same kind of store; plus one streamed PUT of the whole
# file. Prints wall times, multipart's speed as a fraction of cp's, ferry serve's peak RSS
# (VmHWM), the CPU seconds (user + system) each side spent, and the load average.
# Fair to both: the same bytes (src.bin, and its parts split beforehand), read from a warm page
# cache (read once before every repetition), into the same filesystem, `sync` before the clock
# starts, and the destination file's fsync (`sync FILE`) inside the timed span of each (both
# writers fsync before they publish already; a global `sync` there would also wait for other
# processes' writeback on a shared machine). Only the client's requests are timed: the upload id
# is cut out of create's answer with the shell, not a Python start-up.
# With PIN=1 in the environment, `ferry serve` and `ferry cp` run on CPU 0 and the curl clients on
# CPU 1: the clients stand for the GPU node, which is another machine in a real deployment, so the
# server gets the same one core as the copy it is compared with, and the clients' CPU is not taken
# from either.
#   [PIN=1] bench/mlflow_artifacts.sh FERRY_BIN [SIZE_MIB=4096] [PARTS=8] [DIR=/tmp/ferry-bench-art] [REPS=3]
set -euo pipefail
FERRY=${1:?usage: $0 FERRY_BIN [SIZE_MIB] [PARTS] [DIR] [REPS]}
SIZE_MIB=${2:-4096}
PARTS=${3:-8}
DIR=${4:-/tmp/ferry-bench-art}
REPS=${5:-3}
PART_MIB=$((SIZE_MIB / PARTS))
SIZE=$((SIZE_MIB << 20))
PART=$((PART_MIB << 20))
API=/api/2.0/mlflow-artifacts
ON_SERVER=()
ON_CLIENT=()
if [[ ${PIN:-0} == 1 ]]; then
  (( $(nproc) >= 2 )) || { echo "PIN=1 needs two CPUs" >&2; exit 2; }
  ON_SERVER=(taskset -c 0)
  ON_CLIENT=(taskset -c 1)
  echo "pinned: ferry serve and ferry cp on CPU 0, curl on CPU 1"
fi

rm -rf "$DIR"
mkdir -p "$DIR/parts"
head -c "$SIZE" /dev/urandom > "$DIR/src.bin"
SUM=$(sha256sum "$DIR/src.bin" | cut -c1-64)
(cd "$DIR/parts" && split -b "$PART" -d -a 3 ../src.bin p)
sync

now() { date +%s.%N; }
ALL_CP=()
ALL_MP=()
cpu_of() { awk '{s += $1 + $2} END {printf "%.2f", s}' "$@"; }  # /usr/bin/time -f "%U %S" files
srv_cpu() { awk '{printf "%.2f", ($14 + $15) / 100}' "/proc/$SERVE_PID/stat"; }
serve_start() {
  rm -rf "$DIR/data"
  "${ON_SERVER[@]}" "$FERRY" serve --data "$DIR/data" --listen 127.0.0.1:0 2> "$DIR/serve.log" &
  SERVE_PID=$!
  for _ in $(seq 200); do
    URL=$(grep -o 'http://127.0.0.1:[0-9]*' "$DIR/serve.log" || true)
    [[ -n "$URL" ]] && break
    sleep 0.05
  done
}
serve_stop() {
  HWM=$(awk '/VmHWM/ {print $2 " " $3}' "/proc/$SERVE_PID/status")
  kill "$SERVE_PID"
  wait "$SERVE_PID" || true
}

for rep in $(seq "$REPS"); do
  echo "rep $rep load average: $(cut -d' ' -f1-3 /proc/loadavg)"
  cat "$DIR/src.bin" "$DIR"/parts/p* > /dev/null  # page cache warm for both
  # 1. ferry cp of the file into a local directory.
  rm -rf "$DIR/cpdst"
  sync
  t0=$(now)
  /usr/bin/time -f "%U %S" -o "$DIR/cp.time" "${ON_SERVER[@]}" "$FERRY" cp "$DIR/src.bin" "$DIR/cpdst/ckpt.bin" > /dev/null
  sync "$DIR/cpdst/ckpt.bin"
  t1=$(now)
  [[ $(sha256sum "$DIR/cpdst/ckpt.bin" | cut -c1-64) == "$SUM" ]]
  T_CP=$(echo "$t1 - $t0" | bc)
  ALL_CP+=("$T_CP")
  echo "rep $rep ferry cp: $T_CP s, CPU $(cpu_of "$DIR/cp.time") s"

  # 2. Multipart upload through ferry serve: create, PARTS parallel PUTs, complete.
  serve_start
  sync
  rm -f "$DIR"/curl.*.time
  C0=$(srv_cpu)
  t0=$(now)
  CREATED=$("${ON_CLIENT[@]}" curl -sS --fail -X POST -H 'Content-Type: application/json' \
    --data "{\"num_parts\":$PARTS,\"size\":$SIZE,\"part_size\":$PART}" \
    "$URL$API/mpu/create/1/run/artifacts/ckpt.bin")
  ID=$(grep -o '"upload_id": *"[0-9a-f]*"' <<< "$CREATED" | grep -o '[0-9a-f]\{32\}')
  n=1
  pids=()
  for f in "$DIR"/parts/p*; do
    /usr/bin/time -f "%U %S" -o "$DIR/curl.$n.time" \
      "${ON_CLIENT[@]}" curl -sS --fail -o /dev/null -T "$f" "$URL$API/mpu/part/$ID/$n" &
    pids+=($!)
    n=$((n + 1))
  done
  for p in "${pids[@]}"; do wait "$p"; done  # not `wait`: ferry serve is a job too
  "${ON_CLIENT[@]}" curl -sS --fail -o /dev/null -X POST -H 'Content-Type: application/json' \
    --data "{\"upload_id\":\"$ID\"}" \
    "$URL$API/mpu/complete/1/run/artifacts/ckpt.bin"
  sync "$DIR/data/tracker/artifacts/1/run/artifacts/ckpt.bin"
  t1=$(now)
  C1=$(srv_cpu)
  grep -q '"direct": *true' <<< "$CREATED"
  [[ $(sha256sum "$DIR/data/tracker/artifacts/1/run/artifacts/ckpt.bin" | cut -c1-64) == "$SUM" ]]
  serve_stop
  T_MP=$(echo "$t1 - $t0" | bc)
  ALL_MP+=("$T_MP")
  echo "rep $rep ferry serve multipart ($PARTS x $PART_MIB MiB): $T_MP s," \
    "$(echo "scale=2; $T_CP / $T_MP" | bc)x of ferry cp's speed, VmHWM $HWM," \
    "CPU server $(echo "$C1 - $C0" | bc) s + curl $(cpu_of "$DIR"/curl.*.time) s"

  # 3. One streamed PUT of the whole file.
  serve_start
  sync
  t0=$(now)
  "${ON_CLIENT[@]}" curl -sS --fail -o /dev/null -T "$DIR/src.bin" "$URL$API/artifacts/1/run/artifacts/ckpt.bin"
  sync "$DIR/data/tracker/artifacts/1/run/artifacts/ckpt.bin"
  t1=$(now)
  [[ $(sha256sum "$DIR/data/tracker/artifacts/1/run/artifacts/ckpt.bin" | cut -c1-64) == "$SUM" ]]
  serve_stop
  echo "rep $rep ferry serve single PUT: $(echo "$t1 - $t0" | bc) s, VmHWM $HWM"
done
# Summary. On a VM whose host backs freshly written pages on demand, single repetitions of
# either side swing 2-5x; the best of the repetitions is what each can do, the median what it
# did.
best() { printf '%s\n' "$@" | sort -g | head -1; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
B_CP=$(best "${ALL_CP[@]}"); B_MP=$(best "${ALL_MP[@]}")
M_CP=$(median "${ALL_CP[@]}"); M_MP=$(median "${ALL_MP[@]}")
echo "best of $REPS: ferry cp $B_CP s, multipart $B_MP s = $(echo "scale=2; $B_CP / $B_MP" | bc)x;" \
  "medians: $M_CP s, $M_MP s = $(echo "scale=2; $M_CP / $M_MP" | bc)x"
rm -rf "$DIR"
