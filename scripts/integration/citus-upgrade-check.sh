#!/usr/bin/env bash
# A distributed deployment upgraded (docs/operations.md, "Upgrading" and "Running on Citus"):
# a database of its own on the cluster of scripts/test-citus.sh, migrated to the schema of an
# earlier release (UPGRADE_FROM, the last migration it had) and distributed, then migrated to
# this one and distributed again, as an operator upgrades. Passes when every migration
# applies to the distributed schema, every tenant table is distributed and colocated with
# users, distribution_problems() is empty and the statement functions are installed.
#
# Usage: citus-upgrade-check.sh CLUSTER_DIR BINARY
set -euo pipefail
CLUSTER=$1
BIN=$2
UPGRADE_FROM=${UPGRADE_FROM:-0021}
DATABASE=lr_upgrade_check
cd "$(dirname "$0")/../.."

scripts/citus.sh drop-database "$CLUSTER" "$DATABASE" >/dev/null 2>&1 || true
scripts/citus.sh create-database "$CLUSTER" "$DATABASE" >/dev/null
OLD=$(mktemp -d /tmp/lr-upgrade.XXXXXX)
trap 'rm -rf "$OLD"; scripts/citus.sh drop-database "$CLUSTER" "$DATABASE" >/dev/null 2>&1 || true' EXIT
for file in sql/migrations/*.sql; do
    name=$(basename "$file")
    [[ "$name" > "${UPGRADE_FROM}_~" ]] || cp "$file" "$OLD/"
done
chmod 755 "$OLD"; chmod 644 "$OLD"/*
URL=$(scripts/citus.sh env "$CLUSTER" | sed -n 's/^LR_MIGRATE_DATABASE_URL=//p' | sed "s|/landmark_remark?|/$DATABASE?|")
owner() { psql -X -q -v ON_ERROR_STOP=1 "$URL" -At "$@"; }

# The earlier release: its migrations, and its distribute (the tables and functions; this
# binary's statement functions would name columns that schema does not have yet).
LR_MIGRATE_DATABASE_URL=$URL LR_MIGRATIONS_DIR=$OLD "$BIN" migrate >/dev/null
owner -c "SELECT count(*) FROM admin.distribute()" >/dev/null
# This release, as the operations guide says: migrate, then distribute.
LR_MIGRATE_DATABASE_URL=$URL "$BIN" migrate >/dev/null
LR_MIGRATE_DATABASE_URL=$URL "$BIN" distribute >/dev/null

problems=$(owner -c "SELECT string_agg(p, '; ') FROM distribution_problems() p")
[ -z "$problems" ] || { echo "citus-upgrade-check: distribution problems after the upgrade: $problems"; exit 1; }
apart=$(owner -c "SELECT string_agg(t::text, ', ') FROM tenant_tables() t
    WHERE NOT EXISTS (SELECT FROM pg_dist_partition p WHERE p.logicalrelid = t AND p.partmethod = 'h'
                      AND p.colocationid = (SELECT colocationid FROM pg_dist_partition WHERE logicalrelid = 'users'::regclass))")
[ -z "$apart" ] || { echo "citus-upgrade-check: not distributed with users: $apart"; exit 1; }
functions=$(owner -c "SELECT count(*) FROM statement_functions()")
[ "$functions" -gt 0 ] || { echo "citus-upgrade-check: no statement function installed"; exit 1; }
echo "citus-upgrade-check: migrated from ${UPGRADE_FROM} on a distributed schema: $(owner -c "SELECT count(*) FROM tenant_tables()") tenant tables colocated, $functions statement functions"
