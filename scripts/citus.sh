#!/usr/bin/env bash
# A local Citus cluster: a coordinator and workers, each a PostgreSQL 15 + PostGIS
# cluster of scripts/postgres.sh on its own loopback port, with `citus` preloaded.
#
#   scripts/citus.sh require                  fail at once unless Citus for PostgreSQL 15 is installed
#   scripts/citus.sh start DIR [WORKERS]      create (first time) and start DIR/coordinator and
#                                             DIR/worker1..N (default 2), and join them
#   scripts/citus.sh add-worker DIR           start one more worker and add it (no rebalance)
#   scripts/citus.sh stop DIR                 stop every node
#   scripts/citus.sh create-database DIR NAME another database, made ready as landmark_remark is:
#                                             on every node, citus first, workers joined
#   scripts/citus.sh drop-database DIR NAME   drop it on every node
#   scripts/citus.sh env DIR                  the LR_* URLs of the coordinator
#   scripts/citus.sh psql DIR [ROLE]          psql on the coordinator
#
# This is the procedure of docs/operations.md ("Running on Citus"), on one machine.
set -euo pipefail

cd "$(dirname "$0")/.."
command=${1:-}
DIR=${2:-}
DATABASE=landmark_remark

require() {
    local share lib
    share=$(/usr/lib/postgresql/15/bin/pg_config --sharedir 2>/dev/null || true)
    lib=$(/usr/lib/postgresql/15/bin/pg_config --pkglibdir 2>/dev/null || true)
    if [ -z "$share" ] || [ ! -f "$share/extension/citus.control" ] || [ ! -f "$lib/citus.so" ]; then
        cat >&2 <<'TEXT'
make test-citus needs the Citus extension for PostgreSQL 15, and it is not installed.
  In production: Citus 13 from Citus's own packages (https://docs.citusdata.com, "Install"),
  e.g. the postgresql-15-citus-13.x package of packagecloud.io/citusdata/community.
  On a development machine without those packages: build citusdata/citus at tag v13.2.2
  against postgresql-server-dev-15 (./configure --without-libcurl && make && make install;
  see docs/operations.md, "Running on Citus").
TEXT
        exit 1
    fi
}

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# Settings every node needs (docs/operations.md): Citus first in shared_preload_libraries,
# two-phase commit for transactions that touch several nodes, logical replication for
# moving shards without downtime, and triggers on distributed tables (ours only ever
# write rows of the same tenant, which live in the same shard group).
NODE_OPTIONS="-c shared_preload_libraries=citus -c wal_level=logical -c max_prepared_transactions=500 \
-c max_replication_slots=20 -c max_wal_senders=20 -c citus.enable_unsafe_triggers=on \
-c citus.shard_count=${LR_CITUS_SHARD_COUNT:-8}"

start_node() { # NAME
    local node="$DIR/$1" port role=1
    port=$( [ -f "$node/port" ] && cat "$node/port" || free_port )
    if [ "$1" = coordinator ]; then role=coordinator; fi
    LR_PG_OPTIONS="$NODE_OPTIONS" LR_PG_HOST_AUTH=trust LR_PG_CITUS=$role \
        scripts/postgres.sh start "$node" "$port" >/dev/null
}

node_port() { cat "$DIR/$1/port"; }

node_sql() { # NODE DATABASE SQL, as the superuser, without notices ("already exists, skipping")
    local psql=(env PGOPTIONS="-c client_min_messages=warning" psql -X -q -At -v ON_ERROR_STOP=1 -h "$DIR/$1/socket" -p "$(node_port "$1")" -U postgres -d "$2" -c "$3")
    if [ "$(id -u)" = 0 ]; then (cd / && runuser -u postgres -- "${psql[@]}"); else "${psql[@]}"; fi
}
coordinator_sql() { node_sql coordinator "$DATABASE" "$1"; }

workers() { find "$DIR" -maxdepth 1 -name 'worker*' -printf '%f\n' | sort -V; }

join_workers() {
    coordinator_sql "SELECT citus_set_coordinator_host('127.0.0.1', $(node_port coordinator))" >/dev/null
    local worker
    for worker in $(workers); do
        coordinator_sql "SELECT citus_add_node('127.0.0.1', $(node_port "$worker")) WHERE NOT EXISTS (
            SELECT FROM pg_dist_node WHERE nodename = '127.0.0.1' AND nodeport = $(node_port "$worker"))" >/dev/null
    done
    # Created through Citus, on every node, and recorded as distributed (postgres.sh).
    coordinator_sql "CREATE EXTENSION IF NOT EXISTS postgis; CREATE EXTENSION IF NOT EXISTS pg_trgm;
        CREATE EXTENSION IF NOT EXISTS btree_gist; CREATE EXTENSION IF NOT EXISTS btree_gin;
        CREATE EXTENSION IF NOT EXISTS unaccent;" 2>/dev/null
}

start() {
    require
    [ -n "$DIR" ] || { echo "usage: scripts/citus.sh start DIR [WORKERS]" >&2; exit 2; }
    mkdir -p "$DIR"
    if [ "$(id -u)" = 0 ]; then chmod 755 "$DIR"; fi
    start_node coordinator
    local count=${3:-2} i
    if [ -z "$(workers)" ]; then
        for i in $(seq 1 "$count"); do start_node "worker$i"; done
    else
        for i in $(workers); do start_node "$i"; done
    fi
    join_workers
}

# Every node gets the database, from template0 so that citus is its first extension (as
# scripts/postgres.sh does for landmark_remark); Citus's node list is per database, so the
# workers join it on the coordinator, which then creates the other extensions everywhere.
create_database() { # NAME
    local name=$1 node
    for node in coordinator $(workers); do
        if [ -z "$(node_sql "$node" postgres "SELECT 1 FROM pg_database WHERE datname = '$name'")" ]; then
            node_sql "$node" postgres "CREATE DATABASE \"$name\" OWNER landmark_owner TEMPLATE template0"
        fi
        node_sql "$node" "$name" "CREATE EXTENSION IF NOT EXISTS citus" >/dev/null
    done
    DATABASE=$name join_workers
}

drop_database() { # NAME
    local node
    for node in coordinator $(workers); do
        node_sql "$node" postgres "DROP DATABASE IF EXISTS \"$1\" WITH (FORCE)" >/dev/null
    done
}

add_worker() {
    local n
    n=$(( $(workers | wc -l) + 1 ))
    start_node "worker$n"
    join_workers
    echo "worker$n on port $(node_port "worker$n")"
}

stop() {
    local node
    for node in coordinator $(workers); do scripts/postgres.sh stop "$DIR/$node"; done
}

case "$command" in
require) require ;;
start) start "$@" ;;
add-worker) add_worker ;;
stop) stop ;;
create-database) create_database "${3:?usage: scripts/citus.sh create-database DIR NAME}" ;;
drop-database) drop_database "${3:?usage: scripts/citus.sh drop-database DIR NAME}" ;;
env) scripts/postgres.sh env "$DIR/coordinator" ;;
psql) scripts/postgres.sh psql "$DIR/coordinator" "${3:-landmark_owner}" ;;
*) sed -n '2,16p' "$0"; exit 2 ;;
esac
