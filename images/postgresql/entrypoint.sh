#!/bin/sh
# Starts PostgreSQL on $PGDATA, making the cluster on first start: user and database from
# POSTGRES_USER and POSTGRES_DB, the password from POSTGRES_PASSWORD, password (SCRAM) sign-in
# over TCP. The data directory's parent is the volume (writable through the pod's fsGroup).
set -eu
: "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is required}"
user=${POSTGRES_USER:-dutil}
db=${POSTGRES_DB:-dutil}
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  mkdir -p "$PGDATA"
  chmod 0700 "$PGDATA"
  pwfile=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
  initdb --pgdata="$PGDATA" --username="$user" --pwfile="$pwfile" --encoding=UTF8 --locale=C.UTF-8 \
    --auth-local=scram-sha-256 --auth-host=scram-sha-256 >/dev/null
  rm -f "$pwfile"
  printf 'host all all 0.0.0.0/0 scram-sha-256\nhost all all ::/0 scram-sha-256\n' >>"$PGDATA/pg_hba.conf"
  echo "CREATE DATABASE \"$db\" OWNER \"$user\";" | postgres --single -D "$PGDATA" -c unix_socket_directories=/tmp postgres >/dev/null
  echo "dutil-postgresql: made the database $db for $user"
fi
exec postgres -D "$PGDATA" -c listen_addresses='*' -c unix_socket_directories=/tmp -c max_connections="${POSTGRES_MAX_CONNECTIONS:-200}"
