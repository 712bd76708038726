#!/usr/bin/env bash
# Real-browser end-to-end tests of the web app (web/), with Selenium driving
# Debian's headless Chromium against the live service on a throwaway PostgreSQL.
#
#   scripts/test-web.sh [--screenshots] [unittest options, e.g. -k Live -f]
#
#   --screenshots / LR_WEB_SCREENSHOTS=1   also write docs/screenshots/*.png (map, list and
#                                          search results at phone and desktop sizes)
#   LR_BIN                 the service binary (default: $(swift build --show-bin-path)/landmark-remark;
#                          this script never builds)
#   LR_WEB_REPORT_DIR      where the service log and failure screenshots go (default .build/web-report)
#
# Installs Chromium, its driver and Leaflet from Debian when missing, and Selenium
# (pinned) into .build/web-venv (reused when the version matches). Selenium drives
# /usr/bin/chromium through /usr/bin/chromedriver and never downloads a browser.
# Starts PostgreSQL on a free port, migrates, creates the tenant `web` with the demo
# places and notes (sql/demo: default places around Sydney), serves on a free port
# with no map tiles and a fast event poll, and runs Tests/WebApp with the standard
# library's unittest. The browser resolves no host but this machine's, and a test
# fails if its page asked for anything elsewhere. Everything it started is stopped
# on exit, also on failure or Ctrl-C. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

SELENIUM_VERSION=4.52.0
VENV=$ROOT/.build/web-venv
REPORT_DIR=${LR_WEB_REPORT_DIR:-$ROOT/.build/web-report}
TENANT=web
SCREENSHOTS=${LR_WEB_SCREENSHOTS:-0}
UNITTEST_ARGS=()
for arg in "$@"; do
    case "$arg" in
    --screenshots) SCREENSHOTS=1 ;;
    *) UNITTEST_ARGS+=("$arg") ;;
    esac
done

scripts/install-deps.sh chromium chromium-driver libjs-leaflet
python3 -c 'import venv, ensurepip' 2>/dev/null || scripts/install-deps.sh python3-venv

if ! "$VENV/bin/python" -c 'import sys, selenium; sys.exit(selenium.__version__ != sys.argv[1])' "$SELENIUM_VERSION" 2>/dev/null; then
    echo "test-web: installing selenium $SELENIUM_VERSION into $VENV"
    python3 -m venv "$VENV"
    # Selenium's own pins are taken as they are, except certifi (only used for TLS to a
    # remote grid, never here): the newest certifi the registry has may be older than
    # the one this Selenium release names, so it is installed without that pin.
    "$VENV/bin/pip" install --quiet --disable-pip-version-check --no-deps "selenium==$SELENIUM_VERSION"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check certifi \
        'trio>=0.31.0,<1.0' 'trio-websocket>=0.12.2,<1.0' 'typing_extensions>=4.15.0,<5.0' \
        'urllib3[socks]>=2.6.3,<3.0' 'websocket-client>=1.8.0,<2.0'
fi

BIN=${LR_BIN:-$(swift build --show-bin-path)/landmark-remark}
[ -x "$BIN" ] || { echo "test-web: no service binary at $BIN (build it first, or set LR_BIN)" >&2; exit 1; }

DIR=$(mktemp -d /tmp/landmark-remark-web.XXXXXX)
chmod 755 "$DIR"
SERVICE_PID=
IDP_PID=
MAIL_PID=
mkdir -p "$REPORT_DIR"
rm -f "$REPORT_DIR"/service.log "$REPORT_DIR"/*.png
cleanup() {
    local status=$?
    if [ -n "$SERVICE_PID" ]; then kill "$SERVICE_PID" 2>/dev/null && wait "$SERVICE_PID" 2>/dev/null || true; fi
    if [ -n "$IDP_PID" ]; then kill "$IDP_PID" 2>/dev/null && wait "$IDP_PID" 2>/dev/null || true; fi
    if [ -n "$MAIL_PID" ]; then kill "$MAIL_PID" 2>/dev/null && wait "$MAIL_PID" 2>/dev/null || true; fi
    scripts/postgres.sh stop "$DIR" || true
    rm -rf "$DIR"
    if [ "$status" != 0 ] && [ -s "$REPORT_DIR/service.log" ]; then
        echo "test-web: last lines of $REPORT_DIR/service.log:"
        tail -n 40 "$REPORT_DIR/service.log"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
LR_PG_FSYNC=off scripts/postgres.sh start "$DIR" "$(free_port)"
while IFS='=' read -r name value; do export "$name=$value"; done < <(scripts/postgres.sh env "$DIR")
unset LR_SUPERUSER_DATABASE_URL

PORT=$(free_port)
export LR_HOST=127.0.0.1 LR_PORT=$PORT
export LR_MIGRATIONS_DIR=$ROOT/sql/migrations LR_OPENAPI_PATH=$ROOT/openapi/openapi.json
# The app's settings: its tenant, no map tiles (nothing leaves this machine), and live
# changes within tens of milliseconds, so the wait for them (LIVE_WAIT) is the app's.
export LR_WEB_TENANT=$TENANT LR_MAP_TILE_URL=none LR_EVENTS_POLL_INTERVAL_MS=50
# Stream tickets at their shortest life, so a test can see one expire in seconds.
export LR_EVENT_TICKET_TTL_SECONDS=5
# Cheap hashing; throttles out of reach of a suite that signs up, logs in (once with a
# wrong password on purpose) and makes guests from one address.
export LR_SCRYPT_LOG_N=4 LR_LOGIN_FAILURES_PER_USER=1000 LR_LOGIN_FAILURES_PER_ADDRESS=100000 \
    LR_LOGIN_FAILURES_PER_ACCOUNT=1000000 LR_GUESTS_PER_ADDRESS_PER_HOUR=10000
export LR_LOG_LEVEL=${LR_LOG_LEVEL:-info}

# A real OpenID Connect provider on this machine (the test identity provider: its own
# sign-in page, then back to the app with an ID token), for "Sign in with …".
IDP_BIN=$(dirname "$BIN")/test-identity-provider
[ -x "$IDP_BIN" ] || { echo "test-web: no $IDP_BIN (swift build builds it)" >&2; exit 1; }
IDP_PORT=$(free_port)
"$IDP_BIN" --port "$IDP_PORT" >"$REPORT_DIR/identity-provider.log" 2>&1 &
IDP_PID=$!
IDP=http://127.0.0.1:$IDP_PORT
for _ in $(seq 1 600); do grep -q "listening on" "$REPORT_DIR/identity-provider.log" && break; sleep 0.1; done
grep -q "listening on" "$REPORT_DIR/identity-provider.log" || { echo "test-web: the identity provider did not start" >&2; exit 1; }
export LR_IDENTITY_ALLOW_LOOPBACK=true LR_WEB_SIGN_IN_OIDC="oidc:test web-app $IDP/authorize Test ID"

"$BIN" migrate >/dev/null
"$BIN" tenant create "$TENANT" --name "Web" >/dev/null
"$BIN" identity-provider set --tenant "$TENANT" --provider oidc:test --client-id web-app \
    --issuer "$IDP" --jwks-uri "$IDP/jwks" --nonce raw >/dev/null
# Default (curated) places around Sydney and another user's notes there.
"$BIN" seed-demo --tenant "$TENANT" --directory sql/demo >/dev/null

# A mail catcher (TLS and a login, as a relay) for the reset and verification tests, and the
# tenant's mail through it; the tests read what it caught from $LR_WEB_MAILDIR.
source scripts/lib/mail-catcher.sh
install_mail_catcher "$DIR"
MAIL_PORT=$(free_port)
"$MAIL_CATCHER_PYTHON" scripts/test-smtp-server.py --port "$MAIL_PORT" --tls starttls --cert "$DIR/smtp-cert.pem" \
    --key "$DIR/smtp-key.pem" --maildir "$DIR/mail" >"$DIR/mail-ready" &
MAIL_PID=$!
for _ in $(seq 1 600); do grep -q READY "$DIR/mail-ready" && break; sleep 0.1; done
grep -q READY "$DIR/mail-ready" || { echo "test-web: the mail catcher did not start" >&2; exit 1; }
export LR_DATA_KEY=$(openssl rand -base64 32) LR_SMTP_CA_FILE=$DIR/smtp-cert.pem LR_MAIL_POLL_INTERVAL_MS=50
export LR_WEB_MAILDIR=$DIR/mail
psql -q "$LR_MIGRATE_DATABASE_URL" \
    -c "SELECT admin.set_tenant_mail('$TENANT', 'smtp://127.0.0.1:$MAIL_PORT', 'sender', 'secret', 'noreply@web.example', 'Web')" \
    -c "SELECT 1 FROM admin.set_tenant_setting('$TENANT', 'link_base_url', 'http://127.0.0.1:$PORT')" >/dev/null

"$BIN" serve >"$REPORT_DIR/service.log" 2>&1 &
SERVICE_PID=$!
BASE_URL=http://127.0.0.1:$PORT
for _ in $(seq 1 600); do
    python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2)' "$BASE_URL/readyz" 2>/dev/null && break
    kill -0 "$SERVICE_PID" 2>/dev/null || { echo "test-web: the service did not start" >&2; exit 1; }
    sleep 0.2
done
python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2)' "$BASE_URL/readyz" >/dev/null 2>&1 ||
    { echo "test-web: the service is not ready at $BASE_URL/readyz" >&2; exit 1; }

echo "test-web: service at $BASE_URL (tenant $TENANT, binary $BIN)"
started=$(date +%s)
status=0
# The tests change tenant settings (CORS origins) with the same binary and database.
LR_WEB_BASE_URL=$BASE_URL LR_WEB_TENANT=$TENANT LR_WEB_BIN=$BIN LR_WEB_REPORT_DIR=$REPORT_DIR \
    LR_WEB_SCREENSHOTS=$SCREENSHOTS LR_WEB_SCREENSHOT_DIR=$ROOT/docs/screenshots SE_OFFLINE=true \
    LR_WEB_TICKET_TTL=$LR_EVENT_TICKET_TTL_SECONDS LR_WEB_IDENTITY_PROVIDER=$IDP \
    "$VENV/bin/python" -m unittest discover -s Tests/WebApp -t Tests/WebApp -v ${UNITTEST_ARGS[@]+"${UNITTEST_ARGS[@]}"} || status=$?
echo "test-web: $([ "$status" = 0 ] && echo passed || echo "FAILED (exit $status)") in $(($(date +%s) - started))s"
exit "$status"
