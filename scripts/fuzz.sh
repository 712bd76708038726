#!/usr/bin/env bash
# Property-based fuzzing of every operation of openapi/openapi.json with
# Schemathesis, against the live service on a real, throwaway PostgreSQL.
#
#   scripts/fuzz.sh [extra schemathesis run options]
#
#   FUZZ_MAX_EXAMPLES   generated cases per operation and phase, 4x that for stateful
#                       scenarios (default 20: a CI run stays under ~3 minutes)
#   FUZZ_SEED           a seed, to reproduce a run (default: random, printed)
#   FUZZ_WORKERS        concurrent workers (default 1: Hypothesis on Python 3.11 can trip over its own threads)
#   FUZZ_REPORT_DIR     where the JUnit report and the service log go (default .build/fuzz-report)
#
# Installs Schemathesis into a virtual environment under .build/fuzz-venv (reused
# when present), builds the service, starts PostgreSQL on a free port, migrates,
# creates a tenant, serves on a free port, and runs every operation with positive
# and negative cases plus the stateful phase (OpenAPI links: create a note, then
# get, patch and delete it). Checks: no 5xx, and every response conforms to the
# document in status, content type, headers and schema. Everything it started is
# stopped on exit, also on failure or Ctrl-C. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/swift-flags.sh
ROOT=$PWD

SCHEMATHESIS_VERSION=4.32.5
SPEC_VALIDATOR_VERSION=0.9.0
MAX_EXAMPLES=${FUZZ_MAX_EXAMPLES:-20}
SEED=${FUZZ_SEED:-$RANDOM$RANDOM}
WORKERS=${FUZZ_WORKERS:-1}
REPORT_DIR=${FUZZ_REPORT_DIR:-$ROOT/.build/fuzz-report}
VENV=$ROOT/.build/fuzz-venv
TENANT=fuzz

scripts/install-deps.sh
python3 -c 'import venv, ensurepip' 2>/dev/null || scripts/install-deps.sh python3-venv

if ! "$VENV/bin/schemathesis" --version 2>/dev/null | grep -q "version $SCHEMATHESIS_VERSION\$"; then
    echo "fuzz: installing schemathesis $SCHEMATHESIS_VERSION into $VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check \
        "schemathesis==$SCHEMATHESIS_VERSION" "openapi-spec-validator==$SPEC_VALIDATOR_VERSION"
fi
# A document that is not valid OpenAPI 3.1 would make every later failure meaningless.
"$VENV/bin/openapi-spec-validator" openapi/openapi.json

swift build "${SWIFT_FLAGS[@]}" --product landmark-remark
BIN=$(swift build --show-bin-path)/landmark-remark

DIR=$(mktemp -d /tmp/landmark-remark-fuzz.XXXXXX)
chmod 755 "$DIR"
SERVICE_PID=
cleanup() {
    if [ -n "$SERVICE_PID" ]; then kill "$SERVICE_PID" 2>/dev/null && wait "$SERVICE_PID" 2>/dev/null || true; fi
    scripts/postgres.sh stop "$DIR" || true
    rm -rf "$DIR"
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
# Cheap hashing, and throttling far out of reach: generated logins with wrong
# passwords are expected, and must not lock the fuzzer's own account out.
export LR_SCRYPT_LOG_N=4 LR_LOGIN_FAILURES_PER_USER=1000 LR_LOGIN_FAILURES_PER_ADDRESS=100000 LR_LOGIN_FAILURES_PER_ACCOUNT=1000000
export LR_LOG_LEVEL=${LR_LOG_LEVEL:-warning}

"$BIN" migrate >/dev/null
"$BIN" tenant create "$TENANT" --name "Fuzzing" >/dev/null
# Default places and other users' notes, so 403 paths and real place ids are reachable.
"$BIN" seed-demo --tenant "$TENANT" --directory sql/demo >/dev/null

mkdir -p "$REPORT_DIR"
rm -f "$REPORT_DIR"/junit-*.xml "$REPORT_DIR"/ndjson-*.ndjson "$REPORT_DIR"/{schemathesis.txt,service.log,trace.tsv}
"$BIN" serve >"$REPORT_DIR/service.log" 2>&1 &
SERVICE_PID=$!
BASE_URL=http://127.0.0.1:$PORT
for _ in $(seq 1 600); do
    python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2)' "$BASE_URL/readyz" 2>/dev/null && break
    kill -0 "$SERVICE_PID" 2>/dev/null || { echo "fuzz: the service did not start:"; cat "$REPORT_DIR/service.log"; exit 1; }
    sleep 0.2
done

# Stateful scenarios (create a note, then read, change and delete it) are few per
# example; give that phase more of them than the per-operation phases.
cat >"$DIR/schemathesis.toml" <<TOML
[phases.stateful.generation]
max-examples = $((MAX_EXAMPLES * 4))
TOML

echo "fuzz: schemathesis $SCHEMATHESIS_VERSION against $BASE_URL, $MAX_EXAMPLES examples per operation, seed $SEED"
started=$(date +%s)
status=0
# /v1/events is a stream that never ends by itself; it is tested in the Swift suite.
FUZZ_BASE_URL=$BASE_URL FUZZ_TENANT=$TENANT FUZZ_TRACE_FILE=$REPORT_DIR/trace.tsv PYTHONPATH=$ROOT/scripts/fuzz SCHEMATHESIS_HOOKS=hooks \
    "$VENV/bin/schemathesis" --no-color --config-file "$DIR/schemathesis.toml" run "$BASE_URL/v1/openapi.json" \
    --checks not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance \
    --mode all \
    --phases examples,coverage,fuzzing,stateful \
    --max-examples "$MAX_EXAMPLES" \
    --seed "$SEED" \
    --workers "$WORKERS" \
    --exclude-path /v1/events \
    --request-timeout 10 \
    --generation-database none \
    --report junit,ndjson --report-dir "$REPORT_DIR" \
    "$@" | tee "$REPORT_DIR/schemathesis.txt" || status=$?

elapsed=$(($(date +%s) - started))
summary=$("$VENV/bin/python" "$ROOT/scripts/fuzz/summary.py" "$REPORT_DIR" 2>/dev/null || echo "no report")
if [ "$status" = 0 ]; then result=passed; else result="FAILED (exit $status)"; fi
echo "fuzz: $result in ${elapsed}s: $summary; seed $SEED; reports in $REPORT_DIR"
exit "$status"
