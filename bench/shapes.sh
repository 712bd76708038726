#!/usr/bin/env bash
# Every read shape of GET /v1/notes and GET /v1/places (and the inserts) under pgbench,
# with the service's own SQL (bench/shapes/*.sql), as landmark_app with the tenant set
# in the transaction, against a bench cluster loaded by bench/run.sh (1M notes).
#
#   bench/shapes.sh <cluster dir> [shape ...]     e.g. bench/shapes.sh /tmp/lr-bench.X/pg search-coffee
#
# Environment: SHAPES_SECONDS (15 per shape), SHAPES_CLIENTS (2), SHAPES_DIR (bench/shapes), SHAPES_OUT (a directory
# for the pgbench per-transaction logs; a temporary one by default), SHAPES_DEFINES (more `name=value`
# variables for pgbench, separated by spaces: a word bound as a parameter, e.g. `word=%coffee%`).
# Prints a Markdown table: shape, transactions, mean and p99 latency per transaction
# (BEGIN, set_config, the statements, COMMIT), and whether the target is met
# (reads: mean <= 3 ms and p99 < 15 ms; insert: mean <= 1 ms; a 10th page <= 2x its first).
#
# Values that depend on the data are looked up first and passed with -D: the tenants
# (`bench`, and `bench2` as tenant2), the viewer (the generated user kim.20, ~100 notes), and the cursors after
# the 450th row (newest first, and nearest to London's centre within 10 km).
# The insert shapes (insert*) run last and their rows (and their events) are deleted afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${1:?usage: bench/shapes.sh <cluster dir> [shape ...]}
shift
SECONDS_PER=${SHAPES_SECONDS:-15}
# SHAPES_DIR: where the scripts are (bench/shapes); another folder runs other SQL on the same data (before/after).
SHAPES_DIR=${SHAPES_DIR:-bench/shapes}
CLIENTS=${SHAPES_CLIENTS:-2}
OUT=${SHAPES_OUT:-$(mktemp -d /tmp/lr-shapes.XXXXXX)}
mkdir -p "$OUT"
while IFS='=' read -r name value; do export "$name=$value"; done < <(scripts/postgres.sh env "$DIR")
APP=$LR_DATABASE_URL
OWNER=$LR_MIGRATE_DATABASE_URL
q() { psql "$OWNER" -XAtq -v ON_ERROR_STOP=1 -c "$1"; }

TENANT=$(q "SELECT id FROM tenants WHERE slug = 'bench'")
VIEWER=$(q "SELECT id FROM users WHERE tenant_id = $TENANT AND username = 'kim.20'")
# The small tenant (bench2, a tenth of the notes) and a viewer there, for the shapes that ask it.
TENANT2=$(q "SELECT id FROM tenants WHERE slug = 'bench2'")
VIEWER2=$(q "SELECT id FROM users WHERE tenant_id = $TENANT2 AND username = 'kim.20'")
VIS="n.tenant_id = $TENANT AND (n.visibility = 'public' OR n.user_id = $VIEWER)"
read -r NEW_MICROS10 NEW_ID10 < <(q "SELECT (extract(epoch FROM created_at) * 1000000)::bigint, id FROM notes n
    WHERE $VIS ORDER BY created_at DESC, id DESC OFFSET 449 LIMIT 1" | tr '|' ' ')
read -r NEAR_DIST10 NEAR_ID10 < <(q "WITH o AS (SELECT ST_SetSRID(ST_MakePoint(-0.1278, 51.5074), 4326)::geography AS g)
    SELECT ST_Distance(n.location, o.g), n.id FROM notes n, o
    WHERE $VIS AND ST_DWithin(n.location, o.g, 10000)
    ORDER BY ST_Distance(n.location, o.g), n.id OFFSET 449 LIMIT 1" | tr '|' ' ')
DEFINES=(-D tenant="$TENANT" -D viewer="$VIEWER" -D tenant2="$TENANT2" -D viewer2="$VIEWER2" -D new_micros10="$NEW_MICROS10" -D new_id10="$NEW_ID10"
         -D near_dist10="$NEAR_DIST10" -D near_id10="$NEAR_ID10")
for define in ${SHAPES_DEFINES:-}; do DEFINES+=(-D "$define"); done

# Shapes that share a statement name it on a line `-- @<part>: <condition>`, replaced here
# by shapes/<part>.sql.part with <condition> as its @CONDITION@ (pgbench has no include):
# the walking newest-first statement (newest-walk) and the cluster grid's (grid-clusters).
# With `-- @<part>[<variant>]: <condition>`, the part's @VARIANT@ line is replaced by
# shapes/<part>-<variant>.sql.part, and then a @MATCHES@ line by shapes/<part>-matches-<last>.sql.part
# where <variant> is `<first>+<last>` or that file exists for <variant>, else by shapes/<part>-matches.sql.part
# (newest-walk: `further`, `further+windows`, `further+cells` or `windows`).
expand_parts() {
    python3 - "$1" bench/shapes <<'PY'
import os, re, sys
script, parts = sys.argv[1], sys.argv[2]
marker = re.compile(r"^-- @([a-z-]+)(?:\[([a-z+-]+)\])?: ?(.*)$")
def read(name):
    return "".join(l for l in open(os.path.join(parts, name + ".sql.part")) if not l.startswith("--"))
for line in open(script):
    found = marker.match(line)
    if not found:
        sys.stdout.write(line)
        continue
    name, variant, condition = found.groups()
    statement = read(name)
    if "@VARIANT@\n" in statement:
        first, last = variant.split("+")[0], variant.split("+")[-1]
        statement = statement.replace("@VARIANT@\n", read(f"{name}-{first}"))
        own = f"{name}-matches-{last}"
        matches = own if os.path.exists(os.path.join(parts, own + ".sql.part")) else f"{name}-matches"
        statement = statement.replace("@MATCHES@\n", read(matches))
    sys.stdout.write(statement.replace("@CONDITION@", condition.strip()))
PY
}

if [ $# -gt 0 ]; then SHAPES=("$@"); else
    SHAPES=()
    for f in "$SHAPES_DIR"/*.sql; do n=$(basename "$f" .sql); case $n in insert*) ;; *) SHAPES+=("$n") ;; esac; done
    for f in "$SHAPES_DIR"/insert*.sql; do SHAPES+=("$(basename "$f" .sql)"); done
fi

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg); tenant $TENANT, viewer $VIEWER; $CLIENTS clients, ${SECONDS_PER}s per shape; logs in $OUT"
echo
echo "| shape | protocol | transactions | mean ms | p99 ms | target met? |"
echo "|---|---|---:|---:|---:|---|"
declare -A MEAN
for shape in "${SHAPES[@]}"; do
    script=$SHAPES_DIR/$shape.sql
    protocol=$(sed -n 's/^-- pgbench-protocol: //p' "$script")
    rm -f "$OUT/$shape".*
    if grep -qE '^-- @[a-z-]+(\[[a-z+-]+\])?:' "$script"; then
        expand_parts "$script" > "$OUT/$shape.script.sql"
        script=$OUT/$shape.script.sql
    fi
    case $shape in insert*) START_ID=$(q "SELECT coalesce(max(id), 0) FROM notes") ;; esac
    pgbench -n -c "$CLIENTS" -j "$CLIENTS" -T "$SECONDS_PER" -M "${protocol:-prepared}" "${DEFINES[@]}" \
        -l --log-prefix="$OUT/$shape" -f "$script" "$APP" > "$OUT/$shape.out" 2>&1 \
        || { echo "| $shape | pgbench failed: $(grep -m1 -i error "$OUT/$shape.out") | | | | |"; continue; }
    case $shape in insert*)
        q "DELETE FROM notes WHERE id > $START_ID AND user_id = $VIEWER" >/dev/null
        # No service runs here to fold the cluster grid's deltas, which each insert and delete
        # added: left, a few rounds of inserts made the clusters shapes seconds slow (4.1
        # million deltas at 1M, session 27).
        while [ "$(q "SELECT fold_note_grid($TENANT, 200000)")" != 0 ]; do :; done
        q "VACUUM (ANALYZE, INDEX_CLEANUP ON) notes" >/dev/null ;;
    esac
    read -r count mean p99 < <(cat "$OUT/$shape".[0-9]* | awk '{print $3}' | sort -n | awk '
        { v[NR] = $1; s += $1 } END { i = int(NR * 0.99); if (i < 1) i = 1; printf "%d %.3f %.3f\n", NR, s / NR / 1000, v[i] / 1000 }')
    MEAN[$shape]=$mean
    verdict=$(awk -v m="$mean" -v p="$p99" -v s="$shape" 'BEGIN {
        if (s ~ /^insert/) ok = m <= 1; else ok = m <= 3 && p < 15; print ok ? "yes" : "**no**" }')
    case $shape in *-page10)
        first=${MEAN[${shape%-page10}-page1]:-}
        if [ -n "$first" ]; then
            verdict="$verdict; $(awk -v a="$mean" -v b="$first" 'BEGIN { printf "%.1fx page 1 (%s)", a / b, a <= 2 * b ? "ok" : "**over 2x**" }')"
        fi ;;
    esac
    echo "| $shape | $protocol | $count | $mean | $p99 | $verdict |"
done
echo
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
