# The database container's first start, without Docker (sourced by
# scripts/test-integration.sh): on a fresh cluster with only the superuser and
# the landmark_remark database (what the postgis image's entrypoint leaves),
# deploy/postgres/init-landmark-remark.sh must create the roles and extensions
# so that `migrate` succeeds as the owner, who is not a superuser.

section "compose database init script"
as_postgres() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
INIT=$WORK/init-cluster
mkdir -p "$INIT/socket"
[ "$(id -u)" = 0 ] && chown -R postgres "$INIT"
INIT_PORT=$(free_port)
(cd / && as_postgres "$PGBIN/initdb" -D "$INIT/data" -U postgres --auth=trust >/dev/null)
(cd / && as_postgres "$PGBIN/pg_ctl" -D "$INIT/data" -l "$INIT/postgres.log" -w \
    -o "-p $INIT_PORT -k $INIT/socket -c listen_addresses='' -c fsync=off" start >/dev/null)
INIT_QUERY="host=$INIT/socket&port=$INIT_PORT"
stop_init_cluster() { (cd / && as_postgres "$PGBIN/pg_ctl" -D "$INIT/data" -m fast -w stop >/dev/null 2>&1) || true; }
"$PGBIN/psql" -X -q "postgresql://postgres@/postgres?$INIT_QUERY" -c "CREATE DATABASE landmark_remark"

check "init-landmark-remark.sh runs as the image's entrypoint would run it" \
    '(cd / && env PGHOST="$INIT/socket" PGPORT="$INIT_PORT" POSTGRES_USER=postgres \
        LR_OWNER_PASSWORD=owner-secret LR_APP_PASSWORD=app-secret \
        bash "$ROOT/deploy/postgres/init-landmark-remark.sh" >"$WORK/init.log" 2>&1)'
roles=$("$PGBIN/psql" -X -At "postgresql://postgres@/landmark_remark?$INIT_QUERY" -c "
    SELECT string_agg(rolname || CASE WHEN rolsuper OR rolbypassrls THEN ':privileged' ELSE ':plain' END, ' ' ORDER BY rolname)
    FROM pg_roles WHERE rolname LIKE 'landmark%'" 2>/dev/null || true)
expect "... creating both roles, neither superuser nor bypassing RLS" "landmark_app:plain landmark_owner:plain" "$roles"
check "... after which migrate succeeds as the owner" \
    'LR_MIGRATE_DATABASE_URL="postgresql://landmark_owner@/landmark_remark?$INIT_QUERY" "$BIN" migrate >>"$WORK/init.log" 2>&1'
stop_init_cluster
