#!/usr/bin/env bash
# The container test (`make test-container`): builds the service's image from
# deploy/Dockerfile and nginx's from deploy/nginx/Dockerfile with podman, brings up
# deploy/compose.yaml as written (podman-compose) with a .env as the README's compose
# section makes one, and checks through nginx on this machine what an operator relies
# on (scripts/container/stack-checks.sh): migrate and tenant create through the image,
# the README walkthrough, the web app, health checks, uid 10001, a read-only root, a
# drain on `podman stop`, two replicas sharing the load, data kept across down and up.
#
# Only this harness knows how the base images got here: no registry is reachable, so
# scripts/container/base-images.sh makes them from Debian's packages (cached), and
# podman's settings for this machine are in scripts/container/containers.conf. The
# deploy files stay what a docker user runs elsewhere.
#
# Ends with "N passed, M failed" and exits non-zero when anything failed. Everything it
# starts is removed on exit (the compose project, its network and volume); the images
# and podman's build cache stay, so a second run builds only what changed.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
STARTED_AT=$(date +%s.%N)

scripts/install-deps.sh podman runc debootstrap curl python3-pip
# Debian 12 has no podman-compose package; PyPI's, at a version known to work here.
command -v podman-compose >/dev/null || python3 -m pip install -q 'podman-compose==1.6.0'
export CONTAINERS_CONF=$ROOT/scripts/container/containers.conf

WORK=$(mktemp -d /tmp/landmark-remark-container.XXXXXX)
RESPONSE_BODY=$WORK/body
RESPONSE_HEADERS=$WORK/headers
source scripts/integration/lib.sh

# Its own compose project: never the name an operator's stack on this machine has.
PROJECT=lr-container-test
ENV_FILE=$WORK/.env
compose() { podman-compose --project-name "$PROJECT" --env-file "$ENV_FILE" -f deploy/compose.yaml "$@"; }
# containers SERVICE: the service's containers, by name.
containers() {
    podman ps -a --filter "label=com.docker.compose.project=$PROJECT" \
        --filter "label=com.docker.compose.service=$1" --format '{{.Names}}' | sort
}

SUMMARY=""
summary() {
    awk -v start="$STARTED_AT" -v end="$(date +%s.%N)" 'BEGIN { printf "container test took %.1f s\n", end - start }'
    SUMMARY="$PASSED passed, $FAILED failed"
}
show_logs() {
    for container in $(podman ps -a --filter "label=com.docker.compose.project=$PROJECT" --format '{{.Names}}'); do
        echo "--- last lines of $container"; podman logs --tail 15 "$container" 2>&1 || true
    done
}
cleanup() {
    local status=$?
    set +e
    if [ -z "$SUMMARY" ]; then
        FAILED=$((FAILED + 1)); echo "FAIL aborted with status $status"; show_logs; summary
    fi
    [ -z "${LOAD_PID:-}" ] || kill "$LOAD_PID" 2>/dev/null
    compose down -v >"$WORK/down.log" 2>&1 || cat "$WORK/down.log"
    rm -rf "$WORK"
    echo "$SUMMARY"
    [ "$FAILED" -eq 0 ] || exit 1
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# A stack left by a run that was killed: removed first.
compose down -v >/dev/null 2>&1 || true

# timed NAME COMMAND...: runs it, and says how long it took.
timed() {
    local name=$1 start=$SECONDS status=0; shift
    "$@" || status=$?
    echo "     ($name took $((SECONDS - start)) s)"
    return $status
}

section "base images (debootstrap, cached)"
check "base images: debian:bookworm-slim and stand-ins for swift, nginx and postgis" \
    'timed "base images" scripts/container/base-images.sh'

section "images"
# The Swift packages come from this machine's mirrors, mounted while building (the
# swift stand-in's git reads github.com from there); apt-get in the Dockerfiles
# reaches Debian's mirror over the host's network.
# --format docker: podman's default (OCI) has no HEALTHCHECK, and would drop the image's.
SERVICE_IMAGE=localhost/landmark-remark:local
NGINX_IMAGE=localhost/landmark-remark-nginx:local
build_service() {
    podman build --quiet --format docker --network host --volume /opt/swift-packages:/opt/swift-packages:ro \
        -f deploy/Dockerfile -t "$SERVICE_IMAGE" . >"$WORK/build-service.log" 2>&1 || { tail -n 30 "$WORK/build-service.log"; false; }
}
build_nginx() {
    podman build --quiet --format docker --network host -f deploy/nginx/Dockerfile -t "$NGINX_IMAGE" . \
        >"$WORK/build-nginx.log" 2>&1 || { tail -n 30 "$WORK/build-nginx.log"; false; }
}
check "the service image builds from deploy/Dockerfile" 'timed "service image" build_service'
check "nginx's image builds from deploy/nginx/Dockerfile" 'timed "nginx image" build_nginx'
image_mb() { podman image inspect --format '{{.Size}}' "$1" | awk '{ printf "%.1f", $1 / 1000000 }'; }
BINARY_MB=$(podman run --rm --entrypoint stat "$SERVICE_IMAGE" -c %s /usr/local/bin/landmark-remark | awk '{ printf "%.1f", $1 / 1000000 }')
echo "     image sizes: service $(image_mb "$SERVICE_IMAGE") MB (of which the binary $BINARY_MB MB," \
    "the base debian:bookworm-slim $(image_mb docker.io/library/debian:bookworm-slim) MB), nginx $(image_mb "$NGINX_IMAGE") MB"

section "compose up"
# As the README's compose section: .env from .env.example with the three passwords set;
# nginx published on a free port of this machine's loopback only.
EDGE_PORT=$(free_port)
EDGE=http://127.0.0.1:$EDGE_PORT
password() { openssl rand -hex 24; }
sed -e "s/^LR_POSTGRES_PASSWORD=.*/LR_POSTGRES_PASSWORD=$(password)/" \
    -e "s/^LR_OWNER_PASSWORD=.*/LR_OWNER_PASSWORD=$(password)/" \
    -e "s/^LR_APP_PASSWORD=.*/LR_APP_PASSWORD=$(password)/" \
    -e "s/^LR_NGINX_PUBLISH=.*/LR_NGINX_PUBLISH=127.0.0.1:$EDGE_PORT/" .env.example >"$ENV_FILE"

# wait_healthy CONTAINER SECONDS: runs the container's own health check until it passes.
# Docker runs it on a timer; podman does with systemd, which this machine has not, so
# the harness runs it (podman healthcheck run), and podman keeps the status as usual.
wait_healthy() { local container=$1; poll "$2" 'podman healthcheck run "$container" >/dev/null 2>&1'; }
health() { podman inspect --format '{{.State.Healthcheck.Status}}' "$1"; }
# wait_exited CONTAINER SECONDS: until it has stopped; its exit code is then in EXIT_CODE.
wait_exited() {
    local container=$1
    poll "$2" '[ "$(podman inspect --format "{{.State.Status}}" "$container" 2>/dev/null)" = exited ]' &&
        EXIT_CODE=$(podman inspect --format '{{.State.ExitCode}}' "$container")
}

# stack_up: `compose up -d` in the order compose.yaml's depends_on conditions give. Compose
# 2 (docker) waits for each condition itself; podman-compose on podman 4.3 (Debian 12)
# ignores service_healthy, so the harness waits, as an operator with that podman would.
stack_up() {
    compose up -d db >>"$WORK/up.log" 2>&1 &&
        wait_healthy "$(containers db)" 120 &&
        compose up -d --no-deps migrate >>"$WORK/up.log" 2>&1 &&
        wait_exited "$(containers migrate)" 120 && [ "$EXIT_CODE" = 0 ] &&
        compose up -d --no-deps api >>"$WORK/up.log" 2>&1 &&
        for api in $(containers api); do wait_healthy "$api" 120 || return 1; done &&
        compose up -d --no-deps nginx >>"$WORK/up.log" 2>&1 &&
        wait_healthy "$(containers nginx)" 60 ||
        { tail -n 30 "$WORK/up.log"; return 1; }
}
check "compose up: the database turns healthy, migrate exits 0, two replicas and nginx turn healthy" \
    'timed "compose up" stack_up'
check "two api replicas are running" '[ "$(containers api | wc -l)" = 2 ]'
API1=$(containers api | sed -n 1p)
API2=$(containers api | sed -n 2p)
check "the image's health check reports both replicas healthy" \
    '[ "$(health "$API1")" = healthy ] && [ "$(health "$API2")" = healthy ]'
MIGRATE_LOG=$(podman logs "$(containers migrate)" 2>&1 || true)
check "migrate applied the migrations (its output: ${MIGRATE_LOG:0:60}…)" '[[ "$MIGRATE_LOG" == *"applied: 0001_"* ]]'
check "tenant create through the image (the README's compose command)" \
    'compose run --rm migrate tenant create demo --name Demo >"$WORK/tenant.log" 2>&1 || { cat "$WORK/tenant.log"; false; }'
check "seed-demo through the image: the demo places and notes" \
    'compose run --rm migrate seed-demo >"$WORK/seed.log" 2>&1 && grep -q "places added" "$WORK/seed.log" || { cat "$WORK/seed.log"; false; }'
expect "nginx answers /readyz on the published port" 200 "$(http GET "$EDGE/readyz")"

source scripts/container/stack-checks.sh

[ "$FAILED" -eq 0 ] || show_logs
summary    # printed last, by cleanup, once everything is removed
