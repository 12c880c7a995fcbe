#!/usr/bin/env bash
# Start a private PostgreSQL server for the database tests (tests/web) from Debian's
# packages: a fresh cluster in a temporary folder, owned by the postgres user (PostgreSQL
# refuses to run as root), on a free port of 127.0.0.1, trust authentication on that
# address only. Prints the URL of its database `procure_test`; `.ci/postgres.sh stop DIR`
# stops it. Source: https://www.postgresql.org/docs/15/app-initdb.html, app-pg-ctl.html
set -euo pipefail
if [ "${1:-}" = "stop" ]; then
  bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
  runuser -u postgres -- "$bin/pg_ctl" -D "$2/data" -m fast -w stop >/dev/null 2>&1 || true
  rm -rf "$2"
  exit 0
fi
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
dir=$(mktemp -d /tmp/procure-pg.XXXXXX)
chown postgres:postgres "$dir"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
runuser -u postgres -- "$bin/initdb" -D "$dir/data" -A trust -U postgres >/dev/null
runuser -u postgres -- "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
  -o "-p $port -k $dir -c listen_addresses=127.0.0.1" start >/dev/null
runuser -u postgres -- "$bin/createdb" -h 127.0.0.1 -p "$port" -U postgres procure_test
echo "postgresql://postgres@127.0.0.1:$port/procure_test $dir"
