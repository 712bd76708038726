#!/usr/bin/env bash
# The price of matching new notes against watches (issue 39): a note's insert with 100,000
# watches in its tenant, against the same insert with the matching triggers off, under
# pgbench with the service's own insert (bench/shapes/insert.sql), on a bench cluster loaded
# by bench/run.sh (1M notes).
#
#   bench/push.sh <cluster dir> [spread|london]
#
# spread (the default): 10,000 watchers in the tenant `bench`, each with a device and 10
#   watches, around the benchmark's 50 cities (within 20 km of each), radii 100 m to 5 km
#   (log-uniform): about 2,000 watches a city, as a tenant with users in many countries.
# london: the same 100,000 watches all within 30 km of London, where the inserts land: the
#   worst case, hundreds of watchers for every note.
# Prints a Markdown table: the insert's mean and p99 with and without matching, the watchers a
# note reached, and what the sender later spends to expand a note's row into matches. The
# watchers, their watches and devices stay for the next run (made again if the layout differs);
# the notes inserted and what they matched are deleted.
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${1:?usage: bench/push.sh <cluster dir> [spread|london]}
LAYOUT=${2:-spread}
while IFS='=' read -r name value; do export "$name=$value"; done < <(scripts/postgres.sh env "$DIR")
OWNER=$LR_MIGRATE_DATABASE_URL
q() { psql "$OWNER" -XAtq -v ON_ERROR_STOP=1 -c "$1"; }
TENANT=$(q "SELECT id FROM tenants WHERE slug = 'bench'")
# Matching runs only in a tenant that can push (0052): give it APNs credentials, a fresh key
# that nothing here opens.
if [ "$(q "SELECT apns_team_id IS NULL FROM tenants WHERE id = $TENANT")" = t ]; then
    psql "$OWNER" -XAtq -v ON_ERROR_STOP=1 -v key="$(openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256)" \
        <<<"SELECT admin.set_tenant_apns('bench', 'BENCHTEAM0', 'BENCHKEY00', :'key')" >/dev/null
fi

if [ "$(q "SELECT count(*) FROM watches WHERE tenant_id = $TENANT AND label = 'bench $LAYOUT'")" != 100000 ]; then
    echo "push: seeding 10,000 watchers with 100,000 watches ($LAYOUT)" >&2
    CITIES=$(awk -F'\t' 'NF >= 3 { printf "%s(%s, %s)", (n++ ? ", " : ""), $2, $3 }' bench/cities.tsv)
    psql "$OWNER" -Xq -v ON_ERROR_STOP=1 <<SQL
BEGIN;
ALTER TABLE users DISABLE TRIGGER USER;
DELETE FROM watches WHERE tenant_id = $TENANT AND label LIKE 'bench %';
DELETE FROM users WHERE tenant_id = $TENANT AND username LIKE 'watcher.%';
INSERT INTO users (tenant_id, username, password_hash)
SELECT $TENANT, 'watcher.' || g, 'not a hash' FROM generate_series(1, 10000) g;
INSERT INTO sessions (tenant_id, user_id, expires_at)
SELECT $TENANT, u.id, now() + interval '30 days' FROM users u WHERE u.tenant_id = $TENANT AND u.username LIKE 'watcher.%';
INSERT INTO devices (tenant_id, token, user_id, session_id, platform, environment, app_id, created_at, updated_at)
SELECT $TENANT, lpad(to_hex(s.user_id), 64, '0'), s.user_id, s.id, 'apns', 'production', 'com.example.bench', now(), now()
FROM sessions s JOIN users u ON u.tenant_id = s.tenant_id AND u.id = s.user_id
WHERE s.tenant_id = $TENANT AND u.username LIKE 'watcher.%';
WITH cities (lat, lng) AS (VALUES $CITIES),
     numbered AS (SELECT row_number() OVER () - 1 AS i, lat, lng FROM cities),
     spots AS (
         SELECT u.id AS user_id,
                CASE '$LAYOUT' WHEN 'london' THEN 51.5074 ELSE c.lat END AS lat,
                CASE '$LAYOUT' WHEN 'london' THEN -0.1278 ELSE c.lng END AS lng,
                CASE '$LAYOUT' WHEN 'london' THEN 30000 ELSE 20000 END AS spread
         FROM users u CROSS JOIN generate_series(1, 10) k
         JOIN numbered c ON c.i = (u.id * 10 + k) % (SELECT count(*) FROM numbered)
         WHERE u.tenant_id = $TENANT AND u.username LIKE 'watcher.%')
INSERT INTO watches (tenant_id, user_id, label, center, radius_m, created_at, updated_at)
SELECT $TENANT, user_id, 'bench $LAYOUT',
       ST_Project(ST_SetSRID(ST_MakePoint(lng, lat), 4326)::geography, spread * sqrt(random()), 2 * pi() * random()),
       round(exp(ln(100) + random() * (ln(5000) - ln(100))))::int, now(), now()
FROM spots;
ALTER TABLE users ENABLE TRIGGER USER;
COMMIT;
ANALYZE users; ANALYZE sessions; ANALYZE devices; ANALYZE watches;
SQL
fi

run() {
    SHAPES_SECONDS=${PUSH_SECONDS:-20} SHAPES_CLIENTS=1 bench/shapes.sh "$DIR" insert | awk -F'|' '$2 ~ /insert/ { gsub(/ /, ""); print $5 ", " $6 }'
}
with=$(run)
# Nothing expands what the write matched here: clear it, as the notes the run wrote are.
q "DELETE FROM push_notes WHERE tenant_id = $TENANT" >/dev/null
q "ALTER TABLE notes DISABLE TRIGGER notes_push_inserted" >/dev/null
trap 'q "ALTER TABLE notes ENABLE TRIGGER notes_push_inserted" >/dev/null' EXIT
without=$(run)
q "ALTER TABLE notes ENABLE TRIGGER notes_push_inserted" >/dev/null
trap - EXIT
# What the inserts matched: 500 more notes where the shape puts them, counted (the write's
# one row per note, its watchers), expanded as a sender does first (timed), then rolled back.
read -r matched notes expand_ms < <(psql "$OWNER" -XAtq -v ON_ERROR_STOP=1 <<SQL | tr '|' ' ' | paste -sd' '
BEGIN;
DELETE FROM push_notes WHERE tenant_id = $TENANT;
\\set tenant $TENANT
\\set n 500
\\set body 'push bench'
\\i bench/london-notes.sql
SELECT coalesce(sum(cardinality(watchers)), 0), count(*) FROM push_notes WHERE tenant_id = $TENANT;
SELECT extract(epoch FROM clock_timestamp()) AS t0 \\gset
SELECT expand_push_notes($TENANT, 500) \\gset
SELECT round(((extract(epoch FROM clock_timestamp()) - :t0) * 1000 / 500)::numeric, 3);
ROLLBACK;
SQL
)
echo "| layout | insert with matching (mean, p99 ms) | without (mean, p99 ms) | watchers per note (500 notes) | notes with a watcher | sender's expansion per note (ms) |"
echo "|---|---|---|---:|---:|---:|"
echo "| $LAYOUT | $with | $without | $(awk -v m="$matched" 'BEGIN { printf "%.1f", m / 500 }') | $notes of 500 | $expand_ms |"
echo
echo "In one warm session, database time per insert (bench/push-session.sql):"
echo
psql "$OWNER" -X -q -v tenant="$TENANT" -f bench/push-session.sql | sed -n '/round/,$p'
