#!/usr/bin/env bash
# Two builds of the service, alternated on one loaded cluster: req/s, p99 and the service's
# own CPU per request (utime + stime over the run, from /proc), round by round and as
# medians. For a change too small for run.sh's full run to resolve on a shared machine,
# where round-to-round noise reaches 30 %.
#
#   bench/ab.sh PG_DIR BIN_A BIN_B   (e.g. a cluster kept by BENCH_KEEP=1 bench/run.sh)
#
# PG_DIR is a cluster loaded by run.sh (its `bench` tenant and `benchseed` user); it is
# started if stopped and migrated by BIN_A. wrk goes straight to the service (no nginx), with
# run.sh's service settings. AB_OP (nearest), AB_CONNS (32), AB_SECONDS (10), AB_ROUNDS (4).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 3 ] || { sed -n 2,11p "$0"; exit 2; }
PG_DIR=$1 BIN_A=$2 BIN_B=$3
OP=${AB_OP:-nearest} CONNS=${AB_CONNS:-32} SECONDS_PER_RUN=${AB_SECONDS:-10} ROUNDS=${AB_ROUNDS:-4}
source scripts/lib/test-env.sh  # free_port

scripts/postgres.sh status "$PG_DIR" >/dev/null 2>&1 || scripts/postgres.sh start "$PG_DIR" >/dev/null
while IFS='=' read -r name value; do export "$name=$value"; done < <(scripts/postgres.sh env "$PG_DIR")
"$BIN_A" migrate >/dev/null 2>&1
PORT=$(free_port)
WORK=$(mktemp -d)
trap 'kill "${SERVICE_PID:-}" 2>/dev/null || true; rm -rf "$WORK"' EXIT

# One binary's run: starts it, warms it up, loads it, prints "rps p99 cpu_ms_per_request".
run() {
    LR_PORT=$PORT LR_DB_POOL_SIZE=16 LR_LOG_LEVEL=warning LR_TRUSTED_PROXIES=127.0.0.1 LR_LOGIN_FAILURES_PER_ADDRESS=100000 \
    LR_ACCESS_TOKEN_TTL_SECONDS=86400 LR_DB_SHARE_PER_USER_PERCENT=100 LR_DB_SHARE_PER_TENANT_PERCENT=100 \
    LR_HASH_SHARE_PER_ADDRESS=256 LR_HASH_SHARE_PER_TENANT_PERCENT=100 "$1" serve >"$WORK/service.log" 2>&1 &
    SERVICE_PID=$!
    for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
    local token min max
    token=$(curl -sf -X POST "http://127.0.0.1:$PORT/v1/auth/login" -H 'X-Tenant: bench' -H 'Content-Type: application/json' \
        -d '{"username": "benchseed", "password": "bench lighthouse 2026 harbour"}' | python3 -c 'import json, sys; print(json.load(sys.stdin)["access_token"])')
    read -r min max < <(psql -X -At -F' ' "$LR_MIGRATE_DATABASE_URL" \
        -c "SELECT min(n.id), max(n.id) FROM notes n JOIN tenants t ON t.id = n.tenant_id WHERE t.slug = 'bench'")
    export BENCH_DIR=$PWD/bench BENCH_TOKEN=$token BENCH_OP=$OP BENCH_CONNS=$CONNS BENCH_NOTE_MIN=$min BENCH_NOTE_MAX=$max BENCH_USERS=10000
    wrk -t2 -c"$CONNS" -d3s -s "bench/wrk/$OP.lua" "http://127.0.0.1:$PORT" >/dev/null
    local before after
    before=$(awk '{print $14 + $15}' "/proc/$SERVICE_PID/stat")
    wrk -t2 -c"$CONNS" -d"${SECONDS_PER_RUN}s" -s "bench/wrk/$OP.lua" "http://127.0.0.1:$PORT" >"$WORK/wrk.txt"
    after=$(awk '{print $14 + $15}' "/proc/$SERVICE_PID/stat")
    kill "$SERVICE_PID"; wait "$SERVICE_PID" 2>/dev/null || true
    python3 - "$WORK/wrk.txt" "$before" "$after" <<'EOF'
import re, sys, os
text = open(sys.argv[1]).read()
fields = dict(re.findall(r"(\w+)=([0-9.]+)", text.split("RESULT", 1)[1]))
ticks = (int(sys.argv[3]) - int(sys.argv[2])) / os.sysconf("SC_CLK_TCK")
print(fields["rps"], fields["p99_ms"], round(ticks * 1000 / int(fields["requests"]), 3))
EOF
}

echo "op=$OP conns=$CONNS seconds=$SECONDS_PER_RUN rounds=$ROUNDS"
echo "A=$BIN_A"
echo "B=$BIN_B"
echo "round binary rps p99_ms cpu_ms_per_request"
for round in $(seq "$ROUNDS"); do
    for side in A B; do
        bin=BIN_$side
        echo "$round $side $(run "${!bin}")" | tee -a "$WORK/rounds.txt"
    done
done
python3 - "$WORK/rounds.txt" <<'EOF'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
for side in "AB":
    mine = [r for r in rows if r[1] == side]
    medians = [statistics.median(float(r[i]) for r in mine) for i in (2, 3, 4)]
    print(f"median {side}: rps {medians[0]:.1f}, p99 {medians[1]:.1f} ms, service CPU {medians[2]:.3f} ms/request")
EOF
