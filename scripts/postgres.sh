#!/usr/bin/env bash
# Local PostgreSQL 15 + PostGIS cluster for development and tests.
#
#   scripts/postgres.sh start [DIR] [PORT]   create (first time) and start a cluster in DIR
#   scripts/postgres.sh stop [DIR]           stop it
#   scripts/postgres.sh restart [DIR]        restart it (tests use this to prove reconnects)
#   scripts/postgres.sh psql [DIR] [ROLE]    open psql on the landmark_remark database
#   scripts/postgres.sh env [DIR]            print the LR_* URLs for this cluster
#
# DIR defaults to .data/postgres, PORT to 54329. The cluster listens on a unix
# socket in DIR/socket and on 127.0.0.1:PORT. Local socket logins are trusted;
# TCP logins need a password (scram). PostgreSQL refuses to run as root, so as
# root everything runs as the `postgres` user.
#
# scripts/citus.sh builds a Citus node from this with three knobs: LR_PG_OPTIONS (more
# server options), LR_PG_HOST_AUTH (loopback TCP logins, `trust` so the nodes reach each
# other) and LR_PG_CITUS=1 or `coordinator` (the `citus` extension first in the database).
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)
command=${1:-}
DIR=${2:-$ROOT/.data/postgres}
case "$DIR" in /*) ;; *) DIR="$ROOT/$DIR" ;; esac
PORT_FILE="$DIR/port"
SOCKET="$DIR/socket"
DATA="$DIR/data"
LOG="$DIR/postgres.log"
DATABASE=landmark_remark

as_postgres() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

pg_bin() {
    # Debian puts the server binaries outside PATH; prefer PATH when it has them.
    if command -v "$1" >/dev/null 2>&1; then command -v "$1"; else echo "/usr/lib/postgresql/15/bin/$1"; fi
}

port() { cat "$PORT_FILE"; }

superuser_psql() {
    # Run from a folder postgres can enter, whatever the caller's working directory.
    (cd / && as_postgres "$(pg_bin psql)" -X -q -v ON_ERROR_STOP=1 -h "$SOCKET" -p "$(port)" -U postgres "$@")
}

create_cluster() {
    local port=$1
    mkdir -p "$DIR"
    if [ "$(id -u)" = 0 ]; then chown postgres:postgres "$DIR"; fi
    as_postgres install -d -m 700 "$DATA"
    as_postgres install -d -m 755 "$SOCKET"
    (cd / && as_postgres "$(pg_bin initdb)" -D "$DATA" -U postgres -E UTF8 --locale=C.UTF-8 \
        --auth-local=trust --auth-host="${LR_PG_HOST_AUTH:-scram-sha-256}" >/dev/null)
    echo "$port" >"$PORT_FILE"
}

# Creates those of the extensions that are missing, and sends nothing for the others: on
# a Citus worker even CREATE EXTENSION IF NOT EXISTS of an extension Citus manages is
# refused ("operation is not allowed on this node"), so a cluster could not start again.
create_extensions() { # DATABASE EXTENSION...
    local database=$1; shift
    local names
    names=$(printf "'%s'," "$@")
    superuser_psql -d "$database" <<SQL
SELECT format('CREATE EXTENSION %I', name) FROM unnest(ARRAY[${names%,}]) WITH ORDINALITY AS e(name, position)
WHERE NOT EXISTS (SELECT FROM pg_extension WHERE extname = name) ORDER BY position \gexec
SQL
}

bootstrap() {
    # Two roles: the owner runs migrations and owns the tables; the service
    # connects as landmark_app, which owns nothing and cannot bypass row-level security.
    superuser_psql -d postgres <<SQL
DO \$\$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'landmark_owner') THEN
    CREATE ROLE landmark_owner LOGIN CREATEDB PASSWORD 'landmark_owner';
  END IF;
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'landmark_app') THEN
    CREATE ROLE landmark_app LOGIN NOSUPERUSER NOBYPASSRLS PASSWORD 'landmark_app';
  END IF;
END \$\$;
SELECT 'CREATE DATABASE $DATABASE OWNER landmark_owner'
WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = '$DATABASE') \gexec
SQL
    # Citus must be the database's first extension (its hooks see the others created).
    # On a coordinator (LR_PG_CITUS=coordinator) scripts/citus.sh creates the others once
    # the workers have joined, so that Citus creates them there too and records them as
    # its own: otherwise the owner role's CREATE EXTENSION IF NOT EXISTS (0001) makes
    # Citus record them then, which only an extension's owner may do.
    local databases="$DATABASE template1"
    case "${LR_PG_CITUS:-0}" in
    1) create_extensions "$DATABASE" citus ;;
    coordinator) create_extensions "$DATABASE" citus; databases=template1 ;;
    esac
    # PostGIS is not a trusted extension, so the superuser creates it; the first
    # migration's CREATE EXTENSION IF NOT EXISTS then finds it there. template1
    # gets it too, so databases the tests create have it as well.
    for database in $databases; do
        create_extensions "$database" postgis pg_trgm btree_gist btree_gin unaccent
    done
}

start() {
    local port=${1:-54329}
    if [ ! -f "$DATA/PG_VERSION" ]; then create_cluster "$port"; fi
    if as_postgres "$(pg_bin pg_ctl)" -D "$DATA" status >/dev/null 2>&1; then
        echo "PostgreSQL already running in $DIR on port $(port)"
    else
        [ -f "$LOG" ] || { touch "$LOG"; [ "$(id -u)" = 0 ] && chown postgres:postgres "$LOG"; }
        # The test suites run at once, each application with its own pool (and owner pools
        # beside): 230 tests went past 200 connections, so there is room for twice that.
        (cd / && as_postgres "$(pg_bin pg_ctl)" -D "$DATA" -l "$LOG" -w -t 60 \
            -o "-p $(port) -k $SOCKET -c listen_addresses=127.0.0.1 -c max_connections=1000 -c fsync=${LR_PG_FSYNC:-on} ${LR_PG_OPTIONS:-}" start >/dev/null)
    fi
    bootstrap
}

stop() {
    if [ -f "$DATA/PG_VERSION" ]; then
        (cd / && as_postgres "$(pg_bin pg_ctl)" -D "$DATA" -m fast -w stop >/dev/null 2>&1) || true
    fi
}

restart() {
    (cd / && as_postgres "$(pg_bin pg_ctl)" -D "$DATA" -m fast -w -l "$LOG" restart >/dev/null)
}

print_env() {
    local host
    host=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$SOCKET")
    echo "LR_DATABASE_URL=postgresql://landmark_app@/$DATABASE?host=$host&port=$(port)"
    echo "LR_MIGRATE_DATABASE_URL=postgresql://landmark_owner@/$DATABASE?host=$host&port=$(port)"
    echo "LR_SUPERUSER_DATABASE_URL=postgresql://postgres@/$DATABASE?host=$host&port=$(port)"
}

case "$command" in
start) start "${3:-}" ;;
stop) stop ;;
restart) restart ;;
psql) (cd / && "$(pg_bin psql)" -h "$SOCKET" -p "$(port)" -U "${3:-landmark_owner}" "$DATABASE") ;;
env) print_env ;;
*) sed -n '2,13p' "$0"; exit 2 ;;
esac
