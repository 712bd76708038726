#!/usr/bin/env bash
# The integration test (`make test-integration`; `make test` runs it after the
# Swift tests): the real executable, two replicas behind the repository's nginx
# configuration, PostgreSQL, and curl.
#
#   1. nginx in front (scripts/integration/nginx-checks.sh): accounts through
#      nginx, client addresses from X-Forwarded-For only via the trusted proxy,
#      request ids, /metrics kept private, 413, gzip, edge rate limit, TLS, failover
#   2. graceful shutdown on SIGTERM during a slow request (shutdown-checks.sh)
#   3. backup with pg_dump and restore into a fresh database (backup-checks.sh)
#   4. the compose database's init script on a fresh cluster (compose-db-checks.sh),
#      and static checks of deploy/Dockerfile and deploy/compose.yaml (deploy-checks.py)
#   5. README.md's walkthrough, run as written against a replica of its own with
#      the demo tenant seeded as `make run` seeds it (readme-checks.sh)
#
# PostgreSQL: inside `make test` it reuses the throwaway cluster of scripts/test.sh
# (LR_TEST_SUPERUSER_DATABASE_URL), in databases of its own; run alone, it starts
# its own cluster. Inside `make test-citus` (LR_INTEGRATION_CITUS) it is a Citus
# coordinator's, and every database is made on each node and distributed after migrate
# (restore then distribute, in the backup check). The compose check has its own plain
# cluster either way. Everything it starts is stopped on exit, also on failure.
# Ends with "N passed, M failed" and exits non-zero when anything failed.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/swift-flags.sh
ROOT=$(pwd)
STARTED_AT=$(date +%s.%N)

scripts/install-deps.sh nginx curl openssl
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
PGBIN=/usr/lib/postgresql/15/bin
[ -x "$PGBIN/pg_dump" ] || PGBIN=$(dirname "$(command -v pg_dump)")

BIN=$(swift build --show-bin-path)/landmark-remark
# Inside `make test`, scripts/test.sh has just built everything (--build-tests);
# building the product alone there would only compile it all again.
if [ -z "${LR_TEST_SUPERUSER_DATABASE_URL:-}" ] || [ ! -x "$BIN" ]; then
    swift build "${SWIFT_FLAGS[@]}" --product landmark-remark
fi

WORK=$(mktemp -d /tmp/landmark-remark-integration.XXXXXX)
chmod 755 "$WORK"
RESPONSE_BODY=$WORK/body
RESPONSE_HEADERS=$WORK/headers
source scripts/integration/lib.sh

declare -A PIDS=()
OWN_CLUSTER=""
DATABASES=()

show_logs() {
    for log in "$WORK"/*.log "$WORK"/nginx/*.log; do
        if [ -s "$log" ]; then echo "--- last lines of $log"; tail -n 15 "$log"; fi
    done
}
SUMMARY=""
# The last line is always the tally; an abort (set -e, a signal) counts as one failure.
summary() {
    awk -v start="$STARTED_AT" -v end="$(date +%s.%N)" 'BEGIN { printf "integration test took %.1f s\n", end - start }'
    SUMMARY="$PASSED passed, $FAILED failed"
}
cleanup() {
    local status=$?
    set +e
    if [ -z "$SUMMARY" ]; then
        FAILED=$((FAILED + 1))
        echo "FAIL aborted with status $status"
        show_logs
        summary
    fi
    for name in "${!PIDS[@]}"; do stop_pid "${PIDS[$name]}"; done
    if declare -F stop_init_cluster >/dev/null; then stop_init_cluster; fi
    if [ -n "$OWN_CLUSTER" ]; then
        scripts/postgres.sh stop "$OWN_CLUSTER"
    else
        for database in "${DATABASES[@]}"; do drop_database "$database"; done
    fi
    rm -rf "$WORK"
    echo "$SUMMARY"
    [ "$FAILED" -eq 0 ] || exit 1
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- PostgreSQL -------------------------------------------------------------
if [ -z "${LR_TEST_SUPERUSER_DATABASE_URL:-}" ]; then
    OWN_CLUSTER=$WORK/postgres
    LR_PG_FSYNC=off scripts/postgres.sh start "$OWN_CLUSTER" "$(free_port)"
    LR_TEST_SUPERUSER_DATABASE_URL=$(scripts/postgres.sh env "$OWN_CLUSTER" | sed -n 's/^LR_SUPERUSER_DATABASE_URL=//p')
fi
# The socket and port of the cluster, to name other roles and databases on it.
PG_QUERY=${LR_TEST_SUPERUSER_DATABASE_URL#*\?}
db_url() { echo "postgresql://$1@/$2?$PG_QUERY"; }
super_psql() {
    local database=$1; shift
    PGOPTIONS="-c client_min_messages=warning" "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 "$(db_url postgres "$database")" "$@"
}

# On a Citus cluster (scripts/test-citus.sh names its directory in LR_INTEGRATION_CITUS;
# the superuser URL is then its coordinator's), each database is made on every node and
# distributed after migrate, as docs/operations.md ("Running on Citus") says.
CITUS=${LR_INTEGRATION_CITUS:-}
# new_database NAME [TEMPLATE]: a fresh, empty database owned by landmark_owner, dropped at the end.
new_database() {
    DATABASES+=("$1")
    drop_database "$1"
    if [ -n "$CITUS" ]; then
        scripts/citus.sh create-database "$CITUS" "$1"
    else
        super_psql postgres -c "CREATE DATABASE $1 OWNER landmark_owner TEMPLATE ${2:-template1}"
    fi
}
drop_database() {
    if [ -n "$CITUS" ]; then scripts/citus.sh drop-database "$CITUS" "$1"
    else super_psql postgres -c "DROP DATABASE IF EXISTS $1 WITH (FORCE)"; fi
}
# distribute NAME: `landmark-remark distribute` on Citus; on one server there is nothing to do.
distribute() {
    [ -z "$CITUS" ] || LR_MIGRATE_DATABASE_URL=$(db_url landmark_owner "$1") "$BIN" distribute
}

# A database of our own; the cluster's template1 already has PostGIS and pg_trgm.
DATABASE=lr_integration
new_database "$DATABASE"
# A snapshot of the migrations: every process of this run sees the same files,
# even while someone edits sql/migrations/ (the replicas compare them in /readyz).
cp -r sql/migrations "$WORK/migrations"
export LR_MIGRATE_DATABASE_URL LR_MIGRATIONS_DIR=$WORK/migrations
LR_MIGRATE_DATABASE_URL=$(db_url landmark_owner "$DATABASE")
check "migrate applies the migrations" '"$BIN" migrate'
[ -z "$CITUS" ] || check "distribute spreads the tables over the Citus workers" 'distribute "$DATABASE" >"$WORK/distribute.log" 2>&1'
check "tenant create" '"$BIN" tenant create itest --name "Integration test"'
TENANT=itest

# --- replicas -----------------------------------------------------------------
# start_replica NAME PORT DATABASE [VAR=value...]: `landmark-remark serve` in the
# background, cheap scrypt for speed, trusting only nginx's address (127.0.0.2),
# and a short shutdown bound, so that nothing stuck can hold the test for long. Map tiles
# from a host of their own, which nginx's copy of the app's policy must name too.
TILE_SOURCE=https://tiles.example.test
start_replica() {
    local name=$1 port=$2 database=$3; shift 3
    env LR_HOST=127.0.0.1 LR_PORT="$port" LR_DATABASE_URL="$(db_url landmark_app "$database")" \
        LR_SCRYPT_LOG_N=4 LR_TRUSTED_PROXIES=127.0.0.2 LR_LOGIN_FAILURES_PER_ADDRESS=3 \
        LR_DB_POOL_SIZE=4 LR_LOG_LEVEL=info LR_SHUTDOWN_TIMEOUT_SECONDS=3 \
        LR_MAP_TILE_URL="$TILE_SOURCE/{z}/{x}/{y}.png" "$@" \
        "$BIN" serve >"$WORK/$name.log" 2>&1 &
    PIDS[$name]=$!
}

PORT1=$(free_port); PORT2=$(free_port)
start_replica replica1 "$PORT1" "$DATABASE"
start_replica replica2 "$PORT2" "$DATABASE"
REPLICA1=http://127.0.0.1:$PORT1
REPLICA2=http://127.0.0.1:$PORT2
check "replica 1 answers /healthz" 'wait_for_status "$REPLICA1/healthz" 200 30'
check "replica 2 answers /healthz" 'wait_for_status "$REPLICA2/healthz" 200 30'

# --- nginx ----------------------------------------------------------------------
# render TEMPLATE NAME...: substitutes ${NAME} for each NAME given, nothing else.
render() {
    python3 - "$@" <<'PY'
import os, re, sys
text = open(sys.argv[1]).read()
names = "|".join(map(re.escape, sys.argv[2:]))
sys.stdout.write(re.sub(r"\$\{(" + names + r")\}", lambda m: os.environ[m.group(1)], text))
PY
}

RUN=$WORK/nginx
mkdir -p "$RUN/conf.d" "$RUN/snippets"
export RUN NGINX_USER="" LR_NGINX_LISTEN LR_NGINX_UPSTREAM LR_NGINX_WEB_ROOT=$PWD/web LR_NGINX_TILE_SOURCE=$TILE_SOURCE \
    LR_NGINX_TLS_LISTEN LR_NGINX_SERVER_NAME \
    LR_NGINX_TLS_CERTIFICATE=$RUN/tls.crt LR_NGINX_TLS_CERTIFICATE_KEY=$RUN/tls.key
# As root, nginx's workers would run as nobody, who cannot write the temp paths here.
[ "$(id -u)" = 0 ] && NGINX_USER="user root;"
NGINX_PORT=$(free_port); TLS_PORT=$(free_port)
LR_NGINX_LISTEN=127.0.0.1:$NGINX_PORT
LR_NGINX_UPSTREAM="server 127.0.0.1:$PORT1; server 127.0.0.1:$PORT2;"
LR_NGINX_TLS_LISTEN=127.0.0.1:$TLS_PORT
LR_NGINX_SERVER_NAME=localhost
render scripts/integration/nginx.conf.template NGINX_USER RUN >"$RUN/nginx.conf"
cp deploy/nginx/snippets/*.conf "$RUN/snippets/"
# The deployed files log to /var/log/nginx; the test keeps its logs in its run directory.
render deploy/nginx/conf.d/landmark-remark.conf.template LR_NGINX_LISTEN LR_NGINX_UPSTREAM LR_NGINX_WEB_ROOT LR_NGINX_TILE_SOURCE |
    sed -e "s#/var/log/nginx/#$RUN/#" -e "s#/var/cache/nginx/#$RUN/#" >"$RUN/conf.d/landmark-remark.conf"
render deploy/nginx/tls/landmark-remark.tls.conf.template \
    LR_NGINX_TLS_LISTEN LR_NGINX_SERVER_NAME LR_NGINX_TLS_CERTIFICATE LR_NGINX_TLS_CERTIFICATE_KEY |
    sed "s#/var/log/nginx/#$RUN/#" >"$RUN/conf.d/landmark-remark.tls.conf"
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost -addext subjectAltName=DNS:localhost \
    -keyout "$LR_NGINX_TLS_CERTIFICATE_KEY" -out "$LR_NGINX_TLS_CERTIFICATE" 2>/dev/null

NGINX_OPTIONS=(-p "$RUN" -c "$RUN/nginx.conf" -e "$RUN/error.log")
check "nginx -t accepts the rendered configuration" '"$NGINX" "${NGINX_OPTIONS[@]}" -t -q'
# In the foreground of its own background job, so that $! is nginx's master itself.
"$NGINX" "${NGINX_OPTIONS[@]}" -g 'daemon off;' &
PIDS[nginx]=$!
EDGE=http://127.0.0.1:$NGINX_PORT
check "nginx proxies /healthz" 'wait_for_status "$EDGE/healthz" 200 10'

# --- the checks -------------------------------------------------------------------
section "setup done"
source scripts/integration/nginx-checks.sh
source scripts/integration/photo-checks.sh
source scripts/integration/shutdown-checks.sh
source scripts/integration/backup-checks.sh
source scripts/integration/compose-db-checks.sh
source scripts/integration/readme-checks.sh
section "deploy files"
# The restored replica is still up: the image's HEALTHCHECK command is run against
# it, and against replica 1's port, where nothing listens any more.
check "deploy files: static checks, and the image's health check against a replica" \
    'python3 scripts/integration/deploy-checks.py "$BIN" --healthcheck-port "$PORT5" --closed-port "$PORT1"'

[ "$FAILED" -eq 0 ] || show_logs
summary    # printed last, by cleanup, once everything is stopped
