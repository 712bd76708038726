# Graceful shutdown (sourced by scripts/test-integration.sh): SIGTERM during a
# slow request lets it finish and the process exit 0; LR_SHUTDOWN_TIMEOUT_SECONDS
# bounds the wait for a request that never finishes.

section "graceful shutdown"

# millis: a monotonic-enough clock for bounds.
millis() { date +%s%3N; }

# A signup at scrypt N=2^17 (the production default, about a second here) is
# the slow request; /metrics shows when its hash is running.
PORT3=$(free_port)
REPLICA3=http://127.0.0.1:$PORT3
start_replica replica3 "$PORT3" "$DATABASE" LR_SCRYPT_LOG_N=17
check "a replica hashing at N=2^17 answers /healthz" 'wait_for_status "$REPLICA3/healthz" 200 60'
curl -s --max-time 30 -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' -H "X-Tenant: $TENANT" \
    --data-binary '{"username": "slow_signup", "password": "a slow but fine password"}' \
    "$REPLICA3/v1/auth/signup" >"$WORK/slow.status" 2>/dev/null &
slow_request=$!
hashing() { curl -s --max-time 2 "$REPLICA3/metrics" 2>/dev/null | grep -q '^lr_password_hashing_in_flight [1-9]'; }
# Deadlines here are generous (a loaded 2-core machine is slow to start anything); what
# is checked is the order of events, not how fast they come.
deadline=$((SECONDS + 60)); was_hashing=no
until [ $SECONDS -ge $deadline ]; do if hashing; then was_hashing=yes; break; fi; sleep 0.02; done
kill -TERM "${PIDS[replica3]}"
expect "the slow signup was hashing when SIGTERM was sent" yes "$was_hashing"
refused() {
    local deadline=$((SECONDS + 30))
    while [ $SECONDS -lt $deadline ]; do
        [ "$(curl -s --max-time 1 -o /dev/null -w '%{http_code}' "$REPLICA3/healthz" 2>/dev/null || true)" = 000 ] && return 0
        sleep 0.02
    done
    return 1
}
check "after SIGTERM, new connections are refused" 'refused && kill -0 "$slow_request" 2>/dev/null'
wait "$slow_request" || true
expect "the request in flight at SIGTERM completes with 201" 201 "$(cat "$WORK/slow.status")"
if wait_for_exit "${PIDS[replica3]}" 60; then
    expect "the replica then exits with status 0" 0 "$EXIT_STATUS"
else
    fail "the replica exits within 60 s of SIGTERM"
fi
unset 'PIDS[replica3]'
check "... having logged the signup's 201" 'grep "route=/v1/auth/signup" "$WORK/replica3.log" | grep -q "status=201"'

# A request that never completes (a body promised but never sent) is cut off
# after LR_SHUTDOWN_TIMEOUT_SECONDS, so the process still ends in time: after the 1 s
# timeout, and long before the client would give up (300 s), whatever the machine's load.
PORT4=$(free_port)
REPLICA4=http://127.0.0.1:$PORT4
start_replica replica4 "$PORT4" "$DATABASE" LR_SHUTDOWN_TIMEOUT_SECONDS=1
check "a replica with a 1 s shutdown timeout answers /healthz" 'wait_for_status "$REPLICA4/healthz" 200 30'
python3 - "$PORT4" "$TENANT" <<'PY' &
import socket, sys, time
connection = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
connection.sendall(b"POST /v1/auth/login HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                   b"X-Tenant: " + sys.argv[2].encode() + b"\r\nContent-Length: 100\r\n\r\n{")
time.sleep(300)
PY
PIDS[stuck_client]=$!
# Hummingbird's metrics count the request as active once its head is read.
stuck() { curl -s --max-time 2 "$REPLICA4/metrics" 2>/dev/null | grep -qE '^http_server_active_requests\{.*POST.*\} [1-9]'; }
deadline=$((SECONDS + 60)); was_stuck=no
until [ $SECONDS -ge $deadline ]; do if stuck; then was_stuck=yes; break; fi; sleep 0.05; done
kill -TERM "${PIDS[replica4]}"
expect "the stuck request was in flight when SIGTERM was sent" yes "$was_stuck"
signalled_at=$(millis)
if wait_for_exit "${PIDS[replica4]}" 60; then
    elapsed=$(($(millis) - signalled_at))
    check "a stuck request does not hold the process past the timeout (exited after ${elapsed} ms)" \
        '[ "$elapsed" -ge 900 ] && [ "$elapsed" -lt 60000 ]'
else
    fail "the replica with a stuck request exits within 60 s of SIGTERM"
fi
unset 'PIDS[replica4]'
stop_pid "${PIDS[stuck_client]}"; unset 'PIDS[stuck_client]'

# A bad setting stops the service at start, naming the variable.
output=$(LR_SHUTDOWN_TIMEOUT_SECONDS=soon LR_DATABASE_URL=unused timeout 10 "$BIN" serve 2>&1) && status=0 || status=$?
check "a bad LR_SHUTDOWN_TIMEOUT_SECONDS stops serve at start, naming it" \
    '[ "$status" -ne 0 ] && grep -q LR_SHUTDOWN_TIMEOUT_SECONDS <<<"$output"'

# An open event stream (once GET /v1/events exists) is ended on SIGTERM, not
# left to be cut off at LR_SHUTDOWN_TIMEOUT_SECONDS, and its client sees the end.
if [ "${EVENTS_STATUS:-404}" = 200 ]; then
    PORT6=$(free_port)
    REPLICA6=http://127.0.0.1:$PORT6
    start_replica streaming "$PORT6" "$DATABASE" LR_SHUTDOWN_TIMEOUT_SECONDS=3
    check "a replica for the event-stream shutdown answers /healthz" 'wait_for_status "$REPLICA6/healthz" 200 30'
    curl -sN --max-time 20 -o "$WORK/shutdown.stream" -H "Authorization: Bearer $TOKEN" "$REPLICA6/v1/events" 2>/dev/null &
    PIDS[stream_client]=$!
    check "... a client's event stream is open" 'wait_for_text "$WORK/shutdown.stream" ": connected" 5'
    kill -TERM "${PIDS[streaming]}"
    signalled_at=$(millis)
    if wait_for_exit "${PIDS[streaming]}" 10; then
        elapsed=$(($(millis) - signalled_at))
        check "with an event stream open, SIGTERM ends the stream and the process well inside the 3 s bound (${elapsed} ms, status $EXIT_STATUS)" \
            '[ "$elapsed" -lt 2000 ] && [ "$EXIT_STATUS" = 0 ]'
    else
        fail "with an event stream open, the replica exits within 10 s of SIGTERM"
    fi
    unset 'PIDS[streaming]'
    check "... and the client sees its stream end" 'wait_for_exit "${PIDS[stream_client]}" 3'
    unset 'PIDS[stream_client]'
fi
