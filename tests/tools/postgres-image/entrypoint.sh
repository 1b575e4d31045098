#!/bin/sh
# The official image's first start, reduced to what compose.postgres.yaml uses.
set -eu
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pw="$(mktemp)"
  cat "${POSTGRES_PASSWORD_FILE:?}" > "$pw"
  initdb -D "$PGDATA" -U "${POSTGRES_USER:-postgres}" --pwfile="$pw" --auth-local=trust \
    --auth-host=scram-sha-256 >/dev/null
  rm -f "$pw"
  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
  pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -c unix_socket_directories=/tmp" -w start >/dev/null
  createdb -U "${POSTGRES_USER:-postgres}" "${POSTGRES_DB:-${POSTGRES_USER:-postgres}}"
  pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
fi
exec postgres -D "$PGDATA" -c listen_addresses='*' -c unix_socket_directories=/tmp
