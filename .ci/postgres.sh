#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests of the PostgreSQL store (memory/postgres/).
#
#   .ci/postgres.sh start   creates a cluster in a new temporary folder, starts it on a free port of
#                           127.0.0.1 and prints two lines: the folder, then the URL of its database
#                           (superuser `rlm` with a password, database `rlm`, scram-sha-256 logins)
#   .ci/postgres.sh stop DIR  stops that cluster and removes the folder
#
# PostgreSQL refuses to run as root, so as root the cluster belongs to `nobody`. Binaries come from PATH
# or Debian's /usr/lib/postgresql/VERSION/bin (the `postgresql` package puts none on PATH).
set -euo pipefail

bindir() {
  if command -v pg_ctl >/dev/null 2>&1; then dirname "$(command -v pg_ctl)"; return; fi
  local d
  d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  [ -n "$d" ] && [ -x "$d/pg_ctl" ] || { echo "postgres.sh: no PostgreSQL binaries (install the postgresql package)" >&2; exit 1; }
  echo "$d"
}

as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u nobody -- "$@"; else "$@"; fi
}

case "${1:-}" in
  start)
    bin=$(bindir)
    dir=$(mktemp -d "${TMPDIR:-/tmp}/rlm-pg-XXXXXX")
    chmod 755 "$dir"
    [ "$(id -u)" = 0 ] && chown nobody "$dir"
    password=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
    echo "$password" >"$dir/pwfile"
    [ "$(id -u)" = 0 ] && chown nobody "$dir/pwfile"
    as_owner "$bin/initdb" -D "$dir/data" -U rlm --pwfile="$dir/pwfile" --auth=scram-sha-256 \
      -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
    rm -f "$dir/pwfile"
    # A free port: bind to port 0 and read what the kernel chose.
    port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir -c max_connections=200 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
      start >/dev/null || { cat "$dir/server.log" >&2; exit 1; }
    psql=$bin/psql
    [ -x "$psql" ] || psql=psql
    PGPASSWORD=$password "$psql" -q -h 127.0.0.1 -p "$port" -U rlm -d postgres -c 'CREATE DATABASE rlm' >/dev/null
    echo "$dir"
    echo "postgres://rlm:$password@127.0.0.1:$port/rlm"
    ;;
  stop)
    dir=${2:?usage: postgres.sh stop DIR}
    bin=$(bindir)
    as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
    rm -rf "$dir"
    ;;
  *)
    echo "usage: .ci/postgres.sh start | stop DIR" >&2
    exit 2
    ;;
esac
