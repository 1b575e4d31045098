#!/usr/bin/env bash
# Starts and stops a throwaway PostgreSQL server (Debian's postgresql 15) for tests and
# benchmarks.
#
#   postgres.sh start DIR [PORT]   (default: a free port)
#   postgres.sh stop DIR           (stops the server and removes DIR)
#   postgres.sh kill DIR           (immediate shutdown, as a crash would; DIR kept, so a later
#                                   start brings the same database back on the same port)
#
# start writes DIR/env (shell syntax) with FERRY_PG_URL=postgresql://postgres@127.0.0.1:PORT/postgres
# (trust authentication on 127.0.0.1 only; tests make their own databases or schemas) and
# FERRY_PG_PORT, FERRY_PG_DIR. If DIR already holds a running server, start reuses it. The
# cluster runs as the `postgres` user (initdb refuses root), detached (setsid); it lives in a
# directory of its own under ${TMPDIR:-/tmp} (DIR may sit below directories the postgres user
# cannot enter, e.g. pytest's), named in DIR/cluster, with its log in CLUSTER/postgres.log. Needs the Debian packages postgresql and libpq-dev
# (scripts/install-deps.sh).
set -euo pipefail

cmd=${1:?usage: postgres.sh start|stop|kill DIR [PORT]}
D=$(realpath -m "${2:?usage: postgres.sh start|stop|kill DIR [PORT]}")
PORT=${3:-}
BIN=${FERRY_PG_BIN:-/usr/lib/postgresql/15/bin}
C=$(cat "$D/cluster" 2>/dev/null || true)  # the cluster's directory, made by start
PGDATA=${C:-/nonexistent}/data

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

as_pg() {  # runs a command as the postgres user (or as ourselves when we are not root)
  if [[ $(id -u) == 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi
}

running() { [[ -f $PGDATA/postmaster.pid ]] && as_pg "$BIN/pg_ctl" -D "$PGDATA" status >/dev/null 2>&1; }

stop() {
  if running; then as_pg "$BIN/pg_ctl" -D "$PGDATA" -m fast -w -t 30 stop >/dev/null || true; fi
  [[ -n $C ]] && rm -rf "$C"
  rm -rf "$D"
}

start() {
  [[ -x $BIN/initdb ]] || { echo "postgres.sh: $BIN/initdb missing; run scripts/install-deps.sh" >&2; exit 1; }
  if [[ -f $D/env ]]; then
    # shellcheck disable=SC1091
    source "$D/env"
    if running; then echo "postgres.sh: reusing $FERRY_PG_URL"; return 0; fi
    if [[ -f $PGDATA/PG_VERSION ]]; then  # killed earlier: the same cluster again
      as_pg setsid "$BIN/pg_ctl" -D "$PGDATA" -l "$C/postgres.log" -w -t 60 start >/dev/null </dev/null ||
        { echo "postgres.sh: server did not restart (log in $C/postgres.log)" >&2; exit 1; }
      echo "postgres.sh: restarted $FERRY_PG_URL"
      return 0
    fi
  fi
  stop
  mkdir -p "$D"
  C=$(mktemp -d "${TMPDIR:-/tmp}/ferry-pg.XXXXXX")
  PGDATA=$C/data
  echo "$C" >"$D/cluster"
  if [[ $(id -u) == 0 ]]; then chown postgres: "$C"; fi
  [[ -n $PORT ]] || PORT=$(free_port)
  as_pg "$BIN/initdb" -D "$PGDATA" -U postgres --auth=trust -E UTF8 --no-sync >"$C/initdb.log" 2>&1 ||
    { echo "postgres.sh: initdb failed (log in $C/initdb.log)" >&2; tail -5 "$C/initdb.log" >&2; exit 1; }
  # Tests only: no fsync (fast setup and ingest; a killed server keeps its commits, only an OS
# crash would lose them), more connections than the default 100 for
  # parallel test binaries and several `ferry serve` replicas.
  cat >>"$PGDATA/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $PORT
unix_socket_directories = '$C'
max_connections = 300
fsync = off
full_page_writes = off
CONF
  as_pg setsid "$BIN/pg_ctl" -D "$PGDATA" -l "$C/postgres.log" -w -t 60 start >/dev/null </dev/null ||
    { echo "postgres.sh: server did not start (log in $C/postgres.log)" >&2; tail -5 "$C/postgres.log" >&2; exit 1; }
  cat >"$D/env" <<ENV
FERRY_PG_URL=postgresql://postgres@127.0.0.1:$PORT/postgres
FERRY_PG_PORT=$PORT
FERRY_PG_DIR=$D
ENV
  echo "postgres.sh: postgresql://postgres@127.0.0.1:$PORT/postgres"
}

kill_server() {
  if running; then as_pg "$BIN/pg_ctl" -D "$PGDATA" -m immediate -w -t 30 stop >/dev/null; fi
}

case $cmd in
  start) start ;;
  stop) stop ;;
  kill) kill_server ;;
  *) echo "usage: postgres.sh start|stop|kill DIR [PORT]" >&2; exit 2 ;;
esac
