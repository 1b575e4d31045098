#!/usr/bin/env bash
# Starts and stops a single-node Slurm cluster (slurmctld + slurmd + its own munged) for tests.
#
#   slurm.sh start DIR
#   slurm.sh stop DIR
#
# Everything lives under DIR: the MUNGE key, socket and daemon (the machine's /etc/munge and
# /run/munge are left alone), slurm.conf with free non-default ports, state, spool, logs and
# pid files. start writes DIR/env (shell syntax, like rgw.sh) with SLURM_CONF, which every
# Slurm command (sbatch, squeue, scontrol) then needs in its environment:
#   set -a; . DIR/env; set +a; sbatch job.sh
# If DIR already holds a running cluster, start reuses it. stop cancels the cluster's jobs, waits
# for them to end, stops the daemons by their pid files and removes DIR; it is safe to run twice.
# Daemons run detached (setsid) with output in DIR/*.log. Needs root and the Debian packages
# slurm-wlm and munge (scripts/install-deps.sh).
set -euo pipefail

cmd=${1:?usage: slurm.sh start|stop DIR}
D=$(realpath -m "${2:?usage: slurm.sh start|stop DIR}")
export SLURM_CONF=$D/slurm.conf

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND...
  local secs=$1 what=$2; shift 2
  for _ in $(seq $((secs * 5))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
  echo "slurm.sh: timed out waiting for $what (logs in $D)" >&2
  tail -5 "$D"/*.log >&2 || true
  return 1
}

node_idle() { [[ $(sinfo -h -n "$node" -o %t) == idle* ]]; }

stop() {
  if [[ -f $D/slurmctld.pid ]] && kill -0 "$(cat "$D/slurmctld.pid")" 2>/dev/null; then
    # Jobs first: their slurmstepd processes are not children of slurmd and would outlive it.
    local jobs
    jobs=$(timeout 10 squeue -h -o %i 2>/dev/null || true)
    if [[ -n $jobs ]]; then
      # shellcheck disable=SC2086
      timeout 10 scancel $jobs 2>/dev/null || true
      for _ in $(seq 150); do
        [[ -z $(timeout 10 squeue -h -t running,completing -o %i 2>/dev/null) ]] && break
        sleep 0.2
      done
    fi
  fi
  # All three at once (each takes a second or two to exit), then wait for each.
  local pids=()
  for name in slurmd slurmctld munged; do
    if [[ -f $D/$name.pid ]]; then
      pids+=("$(cat "$D/$name.pid")")
      kill "${pids[-1]}" 2>/dev/null || true
    fi
  done
  for pid in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
  rm -rf "$D"
}

start() {
  node=$(hostname -s)
  if [[ -f $D/env ]] && timeout 10 scontrol ping 2>/dev/null | grep -q UP && node_idle; then
    echo "slurm.sh: reusing the cluster in $D"
    return 0
  fi
  [[ -e $D ]] && stop
  for bin in munged slurmctld slurmd sbatch scontrol; do
    command -v $bin >/dev/null || { echo "slurm.sh: $bin missing; run scripts/install-deps.sh" >&2; exit 1; }
  done
  mkdir -p "$D/munge" "$D/state" "$D/spool" "$D/run"
  chmod 700 "$D/munge"  # the key's directory: munged insists that only its owner can read it
  chmod 755 "$D/run"    # the socket's: every client must reach it
  head -c 1024 /dev/urandom >"$D/munge/munge.key"
  chmod 400 "$D/munge/munge.key"
  local socket=$D/run/munge.socket.2
  # --force: DIR's parents (/tmp) are writable by others, which munged otherwise refuses.
  setsid munged --foreground --force --socket="$socket" --key-file="$D/munge/munge.key" \
    --pid-file="$D/run/munged.pid" --log-file="$D/munged.log" --seed-file="$D/munge/seed" \
    >"$D/munged.out.log" 2>&1 </dev/null & echo $! >"$D/munged.pid"
  wait_for 10 "munged" munge --socket="$socket" -n

  local ctld_port slurmd_port
  ctld_port=$(free_port); slurmd_port=$(free_port)
  cat >"$SLURM_CONF" <<CONF
ClusterName=ferrytest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
# cred_expire is also how long a requeued job waits before it may start again (default 120 s).
AuthInfo=socket=$socket,cred_expire=10
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
# A requeued or newly submitted job starts within about a second, not at the next 60 s pass.
SchedulerType=sched/builtin
SchedulerParameters=sched_interval=1
ReturnToService=2
JobRequeue=1
MailProg=/bin/true
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/run/slurmctld.pid
SlurmdPidFile=$D/run/slurmd.pid
SlurmctldLogFile=$D/slurmctld.log
SlurmdLogFile=$D/slurmd.log
NodeName=$node NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF
  setsid slurmctld -D -f "$SLURM_CONF" >"$D/slurmctld.out.log" 2>&1 </dev/null &
  echo $! >"$D/slurmctld.pid"
  wait_for 30 "slurmctld" bash -c "timeout 5 scontrol ping | grep -q UP"
  setsid slurmd -D -f "$SLURM_CONF" >"$D/slurmd.out.log" 2>&1 </dev/null & echo $! >"$D/slurmd.pid"
  wait_for 30 "slurmd on node $node" node_idle
  echo "SLURM_CONF=$SLURM_CONF" >"$D/env"
  echo "slurm.sh: Slurm ready (node $node, controller port $ctld_port), env in $D/env"
}

case $cmd in
  start) start ;;
  stop) stop ;;
  *) echo "usage: slurm.sh start|stop DIR" >&2; exit 2 ;;
esac
