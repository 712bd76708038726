#!/usr/bin/env bash
# The benchmark: own PostgreSQL cluster, generated data, the release service behind
# nginx, wrk through the whole stack and pgbench against PostgreSQL alone.
#   bench/run.sh           1,000,000 notes, 8/32/128 connections, 20 s runs
#   bench/run.sh --quick   100,000 notes, 8/32 connections, 5 s runs
#   bench/run.sh --peers   also builds and measures bench/peers/vapor-peer (with --quick too)
#   BENCH_CITUS=1 bench/run.sh [--quick]   the same on a local Citus cluster (scripts/citus.sh:
#                          a coordinator and two workers), the data distributed by tenant
# Writes bench/results/<date>-<quick|full>.md and prints it. See bench/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
MODE=full
PEERS=""
for arg in "$@"; do
    case "$arg" in
    --quick) MODE=quick ;;
    --peers) PEERS=1 ;;
    *) echo "usage: bench/run.sh [--quick] [--peers]"; exit 2 ;;
    esac
done
START=$(date +%s)

scripts/install-deps.sh wrk nginx postgresql-contrib
command -v perf >/dev/null 2>&1 || scripts/install-deps.sh linux-perf || true

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

WORK=$(mktemp -d /tmp/lr-bench.XXXXXX)
chmod 755 "$WORK"
PG_PORT=$(free_port)
SERVICE_PID=""; NGINX_PID=""; PEER_PID=""
cleanup() {
    [ -n "$SERVICE_PID" ] && kill "$SERVICE_PID" 2>/dev/null || true
    [ -n "$PEER_PID" ] && kill "$PEER_PID" 2>/dev/null || true
    [ -f "$WORK/nginx/nginx.pid" ] && kill "$(cat "$WORK/nginx/nginx.pid")" 2>/dev/null || true
    if [ -n "${BENCH_CITUS:-}" ]; then scripts/citus.sh stop "$WORK/citus" || true; fi
    scripts/postgres.sh stop "$WORK/pg" || true
    [ -n "${BENCH_KEEP:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT

if [ -n "${BENCH_CITUS:-}" ]; then
    [ -z "$PEERS" ] || { echo "the peer runs against one server only: no --peers with BENCH_CITUS"; exit 2; }
    echo "== Citus ($WORK/citus: a coordinator and two workers)"
    scripts/citus.sh start "$WORK/citus" 2
    PG_DIR=$WORK/citus/coordinator
    NODES=("$WORK"/citus/coordinator "$WORK"/citus/worker*)
else
    echo "== PostgreSQL ($WORK/pg, port $PG_PORT)"
    scripts/postgres.sh start "$WORK/pg" "$PG_PORT"
    PG_DIR=$WORK/pg
    NODES=("$WORK/pg")
fi
PG_PORT=$(cat "$PG_DIR/port")
SOCK="$PG_DIR/socket"
node_psql() { # DIR, then psql arguments: as postgres on that node's database
    local dir=$1; shift
    if [ "$(id -u)" = 0 ]; then (cd / && runuser -u postgres -- psql -X -q -v ON_ERROR_STOP=1 -h "$dir/socket" -p "$(cat "$dir/port")" -U postgres -d landmark_remark "$@")
    else psql -X -q -v ON_ERROR_STOP=1 -h "$dir/socket" -p "$(cat "$dir/port")" -U postgres -d landmark_remark "$@"; fi
}
su_psql() { node_psql "$PG_DIR" "$@"; }
# Room for the million-note working set; everything else stays at the defaults.
for node in "${NODES[@]}"; do
    node_psql "$node" -c "ALTER SYSTEM SET shared_buffers = '1GB'" -c "ALTER SYSTEM SET max_wal_size = '4GB'"
    scripts/postgres.sh restart "$node"
done
eval "$(scripts/postgres.sh env "$PG_DIR" | sed -E 's/^([A-Z_]+)=(.*)$/export \1='"'"'\2'"'"'/')"

echo "== release build"
BUILD_START=$(date +%s)
# BENCH_BIN=path skips the build (SwiftPM waits while another build holds .build).
if [ -n "${BENCH_BIN:-}" ]; then BIN=$BENCH_BIN; else
    swift build -c release --product landmark-remark 2>&1 | tail -3
    BIN="$(swift build -c release --show-bin-path)/landmark-remark"
fi
BUILD_SECONDS=$(( $(date +%s) - BUILD_START ))

# --peers: the Vapor peer (bench/peers/vapor-peer, its own package and .build), built only
# here; BENCH_PEER_BIN=path skips its build. A cold release build takes 10-18 minutes.
PEER_BUILD_SECONDS=0
if [ -n "$PEERS" ]; then
    echo "== peer release build (bench/peers/vapor-peer)"
    PEER_BUILD_START=$(date +%s)
    if [ -n "${BENCH_PEER_BIN:-}" ]; then PEER_BIN=$BENCH_PEER_BIN; else
        swift build -c release --package-path bench/peers/vapor-peer 2>&1 | tail -3
        PEER_BIN="$(swift build -c release --package-path bench/peers/vapor-peer --show-bin-path)/VaporPeer"
    fi
    PEER_BUILD_SECONDS=$(( $(date +%s) - PEER_BUILD_START ))
fi

"$BIN" migrate
"$BIN" tenant create bench --name "Bench" --if-missing
"$BIN" tenant create bench2 --name "Bench 2" --if-missing

SERVICE_PORT=$(free_port)
NGINX_PORT=$(free_port)
# One token and one address stand for many users here: fair shares would cap them as one.
start_service() {
    LR_PORT=$SERVICE_PORT LR_DB_POOL_SIZE=${BENCH_POOL_SIZE:-16} LR_LOG_LEVEL=warning \
    LR_TRUSTED_PROXIES=127.0.0.1 LR_LOGIN_FAILURES_PER_ADDRESS=100000 LR_ACCESS_TOKEN_TTL_SECONDS=86400 \
    LR_DB_SHARE_PER_USER_PERCENT=100 LR_DB_SHARE_PER_TENANT_PERCENT=100 \
    LR_HASH_SHARE_PER_ADDRESS=256 LR_HASH_SHARE_PER_TENANT_PERCENT=100 \
        "$BIN" serve >"$WORK/service.log" 2>&1 &
    SERVICE_PID=$!
    # Before distribute, a Citus coordinator is not ready (/readyz says so), but serves.
    local probe=${1:-readyz}
    for _ in $(seq 100); do curl -sf "http://127.0.0.1:$SERVICE_PORT/$probe" >/dev/null 2>&1 && return; sleep 0.1; done
    echo "service did not start"; cat "$WORK/service.log"; exit 1
}
if [ -n "${BENCH_CITUS:-}" ]; then start_service healthz; else start_service; fi

echo "== one scrypt hash (service default parameters) for every generated user"
PASSWORD='bench lighthouse 2026 harbour'
curl -sf -X POST "http://127.0.0.1:$SERVICE_PORT/v1/auth/signup" -H 'X-Tenant: bench' -H 'Content-Type: application/json' \
    -d "{\"username\": \"benchseed\", \"password\": \"$PASSWORD\"}" >/dev/null
HASH=$(su_psql -At -c "SELECT password_hash FROM users WHERE username = 'benchseed'")

# BENCH_NOTES=10000000: that many notes in bench instead (a hundred per user; bench2 a tenth).
if [ -n "${BENCH_NOTES:-}" ]; then NOTES=$BENCH_NOTES; USERS=$((NOTES / 100)); NOTES2=$((NOTES / 10)); USERS2=$((USERS / 10))
elif [ $MODE = quick ]; then USERS=1000; NOTES=100000; USERS2=100; NOTES2=10000
else USERS=10000; NOTES=1000000; USERS2=1000; NOTES2=100000; fi
echo "== data: $USERS users, $NOTES notes in bench; $NOTES2 notes in bench2; 2000 places"
LOAD_START=$(date +%s.%N)
(cd "$ROOT" && psql -X -q "$LR_MIGRATE_DATABASE_URL" -v users=$USERS -v notes=$NOTES -v users2=$USERS2 \
    -v notes2=$NOTES2 -v places=2000 -v hash="$HASH" -f bench/generate.sql) | grep -E 'Time:' | tail -20 >"$WORK/load-times.txt" || true
LOAD_SECONDS=$(python3 -c "import time; print(round(time.time() - $LOAD_START, 1))")
# psql's errors went to the log above; a short load must not go on to measure an empty table.
LOADED=$(su_psql -At -c "SELECT count(*) FROM notes")
if [ "$LOADED" -lt $((NOTES + NOTES2)) ]; then echo "the load failed: $LOADED notes"; exit 1; fi
echo "loaded in ${LOAD_SECONDS}s"
# On Citus the tables are distributed now, with their data (generate.sql's helper functions
# could not run over distributed tables), and the service starts again: it learns at start
# how to read the event log.
if [ -n "${BENCH_CITUS:-}" ]; then
    kill "$SERVICE_PID"; wait "$SERVICE_PID" 2>/dev/null || true
    DISTRIBUTE_START=$(date +%s.%N)
    "$BIN" distribute | tail -3
    echo "distributed in $(python3 -c "import time; print(round(time.time() - $DISTRIBUTE_START, 1))")s"
    start_service
fi
# The load ran with the notes' triggers off, the cluster grid's among them: count it afresh.
GRID_START=$(date +%s.%N)
GRID_DELTAS=$(su_psql -At -c "SELECT admin.rebuild_note_grid()")
echo "cluster grid: $GRID_DELTAS public notes counted in $(python3 -c "import time; print(round(time.time() - $GRID_START, 1))")s," \
    "$(su_psql -At -c "SELECT count(*) || ' cells, ' || pg_size_pretty(pg_total_relation_size('note_grid_cells')) FROM note_grid_cells")"
su_psql -At -c "SELECT 'database size: ' || pg_size_pretty(pg_database_size('landmark_remark'))"
# BENCH_LOAD_ONLY=1: stop after the load (to time the generator alone).
[ -z "${BENCH_LOAD_ONLY:-}" ] || exit 0

mkdir -p "$WORK/nginx"
: >"$WORK/nginx/peers.conf"
PEER_URL=""
if [ -n "$PEERS" ]; then
    # As the owner of the tables (no row-level security), over the same socket; the
    # benchseed user (signed up above) writes the peer's notes.
    PEER_PORT=$(free_port)
    PEER_NGINX_PORT=$(free_port)
    PEER_PORT=$PEER_PORT PEER_DB_SOCKET="$SOCK/.s.PGSQL.$PG_PORT" PEER_DB_USER=landmark_owner \
    PEER_DB_NAME=landmark_remark PEER_TENANT=bench PEER_USERNAME=benchseed LR_DB_POOL_SIZE=${BENCH_POOL_SIZE:-16} \
        "$PEER_BIN" >"$WORK/peer.log" 2>&1 &
    PEER_PID=$!
    for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PEER_PORT/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
    curl -sf "http://127.0.0.1:$PEER_PORT/healthz" >/dev/null || { echo "the peer did not start"; cat "$WORK/peer.log"; exit 1; }
    sed -e "s|@PEER_NGINX_PORT@|$PEER_NGINX_PORT|; s|@PEER_PORT@|$PEER_PORT|" bench/nginx-peer.conf >"$WORK/nginx/peers.conf"
    PEER_URL="http://127.0.0.1:$PEER_NGINX_PORT"
    echo "== peer (Vapor) on $PEER_PORT, through nginx on $PEER_NGINX_PORT"
fi

echo "== nginx on $NGINX_PORT"
sed -e "s|@NGINX_PORT@|$NGINX_PORT|; s|@SERVICE_PORT@|$SERVICE_PORT|; s|@WORK@|$WORK/nginx|g" bench/nginx.conf >"$WORK/nginx/nginx.conf"
nginx -c "$WORK/nginx/nginx.conf" -p "$WORK/nginx"
for _ in $(seq 50); do [ -s "$WORK/nginx/nginx.pid" ] && break; sleep 0.1; done

export BENCH_CITUS=${BENCH_CITUS:-} BENCH_PG_DIRS="${NODES[*]}" BENCH_MODE=$MODE BENCH_WORK=$WORK BENCH_BIN=$BIN BENCH_PG_PORT=$PG_PORT BENCH_SOCKET=$SOCK \
    BENCH_SERVICE_PID=$SERVICE_PID BENCH_SERVICE_URL="http://127.0.0.1:$SERVICE_PORT" BENCH_URL="http://127.0.0.1:$NGINX_PORT" \
    BENCH_PASSWORD="$PASSWORD" BENCH_LOAD_SECONDS=$LOAD_SECONDS BENCH_BUILD_SECONDS=$BUILD_SECONDS \
    BENCH_NOTES=$NOTES BENCH_USERS=$USERS BENCH_NOTES2=$NOTES2 BENCH_START=$START \
    BENCH_PEER_URL="$PEER_URL" BENCH_PEER_PID="$PEER_PID" BENCH_PEER_BUILD_SECONDS=$PEER_BUILD_SECONDS
python3 bench/measure.py
