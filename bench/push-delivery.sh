#!/usr/bin/env bash
# The push sender's delivery rate (issue 39): how fast one replica empties a tenant's queue into
# APNs, here the fake APNs (Sources/test-apns: HTTP/2 over TLS on loopback, checking every
# provider token's signature and every header, answering 200), on a bench cluster whose
# tenant `bench` bench/push.sh seeded with 10,000 watchers (the `spread` layout).
#
#   bench/push-delivery.sh <cluster dir> [notes]
#
# With the service stopped, `notes` (300) notes are written near London, where each reaches
# ~16 watchers; then the service starts with only its sender to do, at most 100 pushes per user
# per hour (so each match is a push of its own, not a summary), and the script waits until the
# tenant's queue is empty. Prints a Markdown table: notes, matches, pushes, devices that took
# them, the seconds from the service's start to the last push, and pushes per second. Builds
# release binaries unless BENCH_BIN and BENCH_APNS_BIN name them. What the run wrote is deleted.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/test-env.sh
DIR=${1:?usage: bench/push-delivery.sh <cluster dir> [notes]}
NOTES=${2:-300}
while IFS='=' read -r name value; do export "$name=$value"; done < <(scripts/postgres.sh env "$DIR")
OWNER=$LR_MIGRATE_DATABASE_URL
q() { psql "$OWNER" -XAtq -v ON_ERROR_STOP=1 -c "$1"; }
TENANT=$(q "SELECT id FROM tenants WHERE slug = 'bench'")
[ "$(q "SELECT count(*) FROM watches WHERE tenant_id = $TENANT AND label = 'bench spread'")" = 100000 ] \
    || { echo "push-delivery: run bench/push.sh $DIR spread first (it seeds the watchers)" >&2; exit 2; }

if [ -n "${BENCH_BIN:-}" ]; then BIN=$BENCH_BIN; else
    swift build -c release --product landmark-remark 2>&1 | tail -1
    BIN="$(swift build -c release --show-bin-path)/landmark-remark"
fi
if [ -n "${BENCH_APNS_BIN:-}" ]; then APNS_BIN=$BENCH_APNS_BIN; else
    swift build -c release --product test-apns 2>&1 | tail -1
    APNS_BIN="$(swift build -c release --show-bin-path)/test-apns"
fi

WORK=$(mktemp -d /tmp/lr-push-delivery.XXXXXX)
SERVICE_PID= APNS_PID=
cleanup() {
    [ -z "$SERVICE_PID" ] || kill "$SERVICE_PID" 2>/dev/null || true
    [ -z "$APNS_PID" ] || kill "$APNS_PID" 2>/dev/null || true
    wait 2>/dev/null || true
    q "DELETE FROM notes WHERE tenant_id = $TENANT AND body = 'push delivery bench'; DELETE FROM push_notes WHERE tenant_id = $TENANT;
       DELETE FROM pushes WHERE tenant_id = $TENANT; DELETE FROM push_queues WHERE tenant_id = $TENANT" >/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 143' TERM INT

# A team key of the run's own: the tenant's, and the fake trusts its public half.
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$WORK/key.pem" 2>/dev/null
openssl pkey -in "$WORK/key.pem" -pubout -out "$WORK/public.pem"
"$APNS_BIN" --team BENCHTEAM0 --key-id BENCHKEY00 --public-key "$WORK/public.pem" --topic com.example.bench >"$WORK/apns.log" 2>&1 &
APNS_PID=$!
for _ in $(seq 300); do grep -q "listening on" "$WORK/apns.log" && break; sleep 0.1; done
read -r APNS_URL APNS_CA < <(sed -n 's/^test-apns: listening on \([^ ]*\) ca \(.*\)$/\1 \2/p' "$WORK/apns.log")
[ -n "${APNS_URL:-}" ] || { echo "push-delivery: the fake APNs did not start" >&2; cat "$WORK/apns.log" >&2; exit 1; }
psql "$OWNER" -XAtq -v ON_ERROR_STOP=1 -v key="$(cat "$WORK/key.pem")" \
    <<<"SELECT admin.set_tenant_apns('bench', 'BENCHTEAM0', 'BENCHKEY00', :'key')" >/dev/null

# A full queue before the sender starts: the notes, matched as they are written.
q "DELETE FROM push_notes WHERE tenant_id = $TENANT; DELETE FROM pushes WHERE tenant_id = $TENANT;
   DELETE FROM push_queues WHERE tenant_id = $TENANT" >/dev/null
psql "$OWNER" -XAtq -v ON_ERROR_STOP=1 -v tenant="$TENANT" -v n="$NOTES" -v body='push delivery bench' \
    -f bench/london-notes.sql >/dev/null

PORT=$(free_port)
START=$(date +%s.%N)
LR_PORT=$PORT LR_LOG_LEVEL=warning LR_DATA_KEY=$(openssl rand -base64 32) \
LR_APNS_PRODUCTION_URL=$APNS_URL LR_APNS_SANDBOX_URL=$APNS_URL LR_APNS_CA_FILE=$APNS_CA \
LR_PUSH_PER_USER_PER_HOUR=100 LR_PUSH_POLL_INTERVAL_MS=100 \
    "$BIN" serve >"$WORK/service.log" 2>&1 &
SERVICE_PID=$!
# Done when nothing is left to expand and no match is due (a watcher past 100 pushes in the
# hour waits for the hour); the last push's time is the end.
for _ in $(seq 6000); do
    left=$(q "SELECT (SELECT count(*) FROM push_notes WHERE tenant_id = $TENANT)
                   + (SELECT count(*) FROM push_matches m JOIN notes n ON n.tenant_id = m.tenant_id AND n.id = m.note_id
                      WHERE m.tenant_id = $TENANT AND n.body = 'push delivery bench' AND m.state = 'pending' AND m.next_attempt_at <= now())")
    [ "$left" = 0 ] && break
    kill -0 "$SERVICE_PID" 2>/dev/null || { echo "push-delivery: the service stopped" >&2; cat "$WORK/service.log" >&2; exit 1; }
    sleep 0.5
done
[ "$left" = 0 ] || { echo "push-delivery: $left still queued after 50 minutes" >&2; exit 1; }
waiting=$(q "SELECT count(*) FROM push_matches m JOIN notes n ON n.tenant_id = m.tenant_id AND n.id = m.note_id
              WHERE m.tenant_id = $TENANT AND n.body = 'push delivery bench' AND m.state = 'pending'")
read -r matches pushes delivered first last < <(psql "$OWNER" -XAtq -v ON_ERROR_STOP=1 -F ' ' -c "
    SELECT count(*), count(DISTINCT m.push_id), (SELECT coalesce(sum(delivered), 0) FROM pushes WHERE tenant_id = $TENANT),
           extract(epoch FROM (SELECT min(sent_at) FROM pushes WHERE tenant_id = $TENANT)),
           extract(epoch FROM (SELECT max(sent_at) FROM pushes WHERE tenant_id = $TENANT))
    FROM push_matches m JOIN notes n ON n.tenant_id = m.tenant_id AND n.id = m.note_id
    WHERE m.tenant_id = $TENANT AND n.body = 'push delivery bench' AND m.state IN ('sent', 'collapsed')")
echo "| notes | matches pushed | pushes | devices that took them | seconds (start to last push) | pushes/s (first to last) | matches waiting for the hour |"
echo "|---:|---:|---:|---:|---:|---:|---:|"
awk -v n="$NOTES" -v m="$matches" -v p="$pushes" -v d="$delivered" -v s="$START" -v f="$first" -v l="$last" -v w="$waiting" \
    'BEGIN { printf "| %d | %d | %d | %d | %.1f | %.0f | %d |\n", n, m, p, d, l - s, (l > f ? p / (l - f) : 0), w }'
