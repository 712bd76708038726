#!/usr/bin/env bash
# Writers of one tenant, head to head: the event log as it was before migration
# 0008 (every write took the tenant's counter row until COMMIT) and after (ids
# from a sequence, no shared lock), in one run, alternating, on one cluster.
#
# pgbench runs the service's create transaction as landmark_app, one round trip a
# statement as the service sends them: BEGIN, the tenant setting, the INSERT (whose
# trigger appends the event), COMMIT. fsync on, like bench/run.sh.
#
#   bench/writers.sh                 # 8 and 32 clients, 10 s each, 2 rounds
#   WRITERS_CLIENTS="8 32 128" WRITERS_SECONDS=20 bench/writers.sh
#
# Prints a Markdown table (tps, mean and p99 latency, after ÷ before).
set -euo pipefail
cd "$(dirname "$0")/.."

CLIENTS=${WRITERS_CLIENTS:-8 32}
SECONDS_EACH=${WRITERS_SECONDS:-10}
ROUNDS=${WRITERS_ROUNDS:-2}
BIN=${BENCH_BIN:-.build/debug/landmark-remark}

command -v pgbench >/dev/null || apt-get install -y -q postgresql-contrib >/dev/null
[ -x "$BIN" ] || swift build --product landmark-remark

WORK=$(mktemp -d /tmp/landmark-writers.XXXXXX)
chmod 755 "$WORK"
trap 'scripts/postgres.sh stop "$WORK/pg" || true; [ -n "${WRITERS_KEEP:-}" ] || rm -rf "$WORK"' EXIT
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
scripts/postgres.sh start "$WORK/pg" "$PORT" >/dev/null
SOCKET="$WORK/pg/socket"
psql_as() { local role=$1 db=$2; shift 2; (cd / && runuser -u postgres -- psql -X -q -At -v ON_ERROR_STOP=1 -h "$SOCKET" -p "$PORT" -U "$role" -d "$db" "$@"); }

mkdir -p "$WORK/before-migrations"
for file in sql/migrations/*.sql; do
    case "$(basename "$file")" in 0008_*|0009_*|001*) ;; *) cp "$file" "$WORK/before-migrations/" ;; esac
done
chmod -R a+rX "$WORK"; chown postgres "$WORK"

declare -A TENANT USER
for variant in before after; do
    psql_as postgres postgres -c "CREATE DATABASE writers_$variant OWNER landmark_owner"
    dir=$([ "$variant" = before ] && echo "$WORK/before-migrations" || echo "$PWD/sql/migrations")
    host=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$SOCKET")
    LR_MIGRATE_DATABASE_URL="postgresql://landmark_owner@/writers_$variant?host=$host&port=$PORT" \
        LR_MIGRATIONS_DIR="$dir" "$BIN" migrate >/dev/null
    TENANT[$variant]=$(psql_as landmark_owner "writers_$variant" -c "SELECT id FROM admin.create_tenant('writers', 'Writers')")
    USER[$variant]=$(psql_as landmark_owner "writers_$variant" \
        -c "INSERT INTO users (tenant_id, username, password_hash) VALUES (${TENANT[$variant]}, 'writer', '!') RETURNING id")
done

cat >"$WORK/create.sql" <<'SQL'
\set lat random(-3380000, -3370000) / 100000.0
\set lng random(15110000, 15130000) / 100000.0
BEGIN;
SELECT set_config('app.tenant_id', :tenant::text, true);
INSERT INTO notes (tenant_id, user_id, body, location) VALUES (:tenant, :user, 'written by pgbench', ST_SetSRID(ST_MakePoint(:lng, :lat), 4326)::geography) RETURNING id;
COMMIT;
SQL
chmod a+r "$WORK/create.sql"

run() {
    local variant=$1 clients=$2 prefix="$WORK/log-$1-$2-$3"
    (cd "$WORK" && runuser -u postgres -- pgbench -n -h "$SOCKET" -p "$PORT" -U landmark_app -d "writers_$variant" \
        -c "$clients" -j 2 -T "$SECONDS_EACH" -f create.sql -D tenant="${TENANT[$variant]}" -D user="${USER[$variant]}" \
        -l --log-prefix="$prefix" >"$prefix.out" 2>&1)
    python3 - "$prefix" <<'PY'
import glob, sys
prefix = sys.argv[1]
latencies = sorted(int(line.split()[2]) for path in glob.glob(prefix + ".*") if not path.endswith(".out")
                   for line in open(path))
out = open(prefix + ".out").read()
tps = next(float(l.split("=")[1].split()[0]) for l in out.splitlines() if l.startswith("tps ="))
mean = sum(latencies) / len(latencies) / 1000
p99 = latencies[int(len(latencies) * 0.99)] / 1000
print(f"{tps:.1f} {mean:.2f} {p99:.2f}")
PY
}

echo "| clients | round | before tps | after tps | after ÷ before | before mean / p99 ms | after mean / p99 ms |"
echo "|---:|---:|---:|---:|---:|---:|---:|"
for round in $(seq 1 "$ROUNDS"); do
    for clients in $CLIENTS; do
        read -r b_tps b_mean b_p99 < <(run before "$clients" "$round")
        read -r a_tps a_mean a_p99 < <(run after "$clients" "$round")
        ratio=$(python3 -c "print(f'{$a_tps / $b_tps:.2f}')")
        echo "| $clients | $round | $b_tps | $a_tps | **$ratio** | $b_mean / $b_p99 | $a_mean / $a_p99 |"
    done
done
