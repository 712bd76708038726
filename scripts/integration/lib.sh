# Helpers for scripts/test-integration.sh: checks and their tally, bounded HTTP
# calls, JSON fields, processes started and stopped by pid. Sourced, not run.

PASSED=0
FAILED=0
FAILURES=()

# section TITLE: a heading, with the seconds since the script started.
section() {
    awk -v start="$STARTED_AT" -v now="$(date +%s.%N)" -v title="$1" 'BEGIN { printf "== %s (at %.1f s)\n", title, now - start }'
}

pass() { PASSED=$((PASSED + 1)); echo "ok   $1"; }
fail() { FAILED=$((FAILED + 1)); FAILURES+=("$1"); echo "FAIL $1${2:+: $2}"; }

# check NAME CONDITION: passes when the shell condition (a string, evaluated
# here, so `a && b` stays inside the check) succeeds.
check() {
    if eval "$2"; then pass "$1"; else fail "$1"; fi
}

# expect NAME EXPECTED ACTUAL
expect() {
    if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "expected '$2', got '$3'"; fi
}

# http METHOD URL [curl options...]: prints the status (000 when there was no
# answer); the body goes to $RESPONSE_BODY, the headers to $RESPONSE_HEADERS.
# Every call is bounded by --max-time.
http() {
    local method=$1 url=$2; shift 2
    : >"$RESPONSE_BODY"; : >"$RESPONSE_HEADERS"
    curl -sS --max-time "${HTTP_MAX_TIME:-10}" -X "$method" -o "$RESPONSE_BODY" -D "$RESPONSE_HEADERS" \
        -w '%{http_code}' "$@" "$url" 2>/dev/null || true
}

# post_json URL JSON [curl options...]
post_json() {
    local url=$1 body=$2; shift 2
    http POST "$url" -H 'Content-Type: application/json' --data-binary "$body" "$@"
}

# header NAME: the last response's header value (without CR), empty when absent.
header() {
    tr -d '\r' <"$RESPONSE_HEADERS" | awk -v name="$(echo "$1" | tr 'A-Z' 'a-z')" -F': ' \
        'tolower($1) == name { sub(/^[^:]*: /, ""); value = $0 } END { print value }'
}

# field PATH: a field of the last response's JSON body, e.g. `field user.username`.
field() {
    python3 - "$1" "$RESPONSE_BODY" <<'PY' 2>/dev/null || true
import json, sys
value = json.load(open(sys.argv[2]))
for part in sys.argv[1].split("."):
    value = value[part] if isinstance(value, dict) else None
print("" if value is None else value)
PY
}

# is_problem STATUS CODE: the last response is problem details with that status and code.
is_problem() {
    [ "$(header content-type)" = "application/problem+json" ] &&
        [ "$(field status)" = "$1" ] && [ "$(field code)" = "$2" ]
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# poll SECONDS CONDITION: evaluates the shell condition (a string, like check's) every
# 0.1 s until it succeeds (0) or SECONDS have passed (1). Every wait on a condition is
# this one loop, with a deadline only a failing run waits out. The condition is evaluated
# in here: a caller names its arguments as locals (bash's scoping lets eval see them).
poll() {
    local deadline=$((SECONDS + $1))
    until eval "$2"; do
        [ $SECONDS -lt $deadline ] || return 1
        sleep 0.1
    done
}

# wait_for_status URL STATUS SECONDS: polls until the URL answers STATUS.
wait_for_status() {
    local url=$1 status=$2
    poll "$3" '[ "$(curl -s --max-time 2 -o /dev/null -w "%{http_code}" "$url" 2>/dev/null || true)" = "$status" ]'
}

# wait_for_exit PID SECONDS: waits for a child to end; its status is then in $EXIT_STATUS.
# Returns 1 (and leaves it running) when it did not end in time.
wait_for_exit() {
    local pid=$1 deadline=$((SECONDS + $2))
    # An ended child stays a zombie (and answers kill -0) until it is waited for.
    while kill -0 "$pid" 2>/dev/null && ! ps -o stat= -p "$pid" | grep -q '^Z'; do
        if [ $SECONDS -ge $deadline ]; then return 1; fi
        sleep 0.05
    done
    EXIT_STATUS=0
    wait "$pid" || EXIT_STATUS=$?
    return 0
}

# stop_pid PID: SIGTERM, then SIGKILL if it is still there after 10 s.
stop_pid() {
    local pid=$1
    kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null || true; return 0; }
    kill -TERM "$pid" 2>/dev/null || true
    if ! wait_for_exit "$pid" 10; then
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    fi
}
