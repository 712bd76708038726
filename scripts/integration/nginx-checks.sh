# Through nginx (sourced by scripts/test-integration.sh): $EDGE is nginx,
# $REPLICA1/$REPLICA2 the replicas directly, $TENANT a tenant, $RUN nginx's run
# directory (access.log there), $WORK/replica*.log the replicas' output.
#
# Client addresses: curl --interface picks the source address, so requests from
# 127.0.0.3, .4, .5 … reach nginx as different clients; nginx itself connects
# to the replicas from 127.0.0.2, the only trusted proxy; direct requests to a
# replica come from 127.0.0.1 (or another untrusted address).

section "nginx in front of two replicas"
USERNAME=alice_it
PASSWORD='correct horse battery staple'
CREDENTIALS="{\"username\": \"$USERNAME\", \"password\": \"$PASSWORD\"}"
REPLICA_LOGS=("$WORK/replica1.log" "$WORK/replica2.log")

# --- accounts -----------------------------------------------------------------------
status=$(post_json "$EDGE/v1/auth/signup" "{\"username\": \"$USERNAME\", \"password\": \"$PASSWORD\", \"email\": \"alice_it@example.com\"}" -H "X-Tenant: $TENANT")
expect "signup through nginx is 201" 201 "$status"
status=$(post_json "$EDGE/v1/auth/login" "$CREDENTIALS" -H "X-Tenant: $TENANT")
expect "login through nginx is 200" 200 "$status"
TOKEN=$(field access_token)
expect "login returns an lr_at_ access token" lr_at_ "${TOKEN:0:6}"
status=$(http GET "$EDGE/v1/me" -H "Authorization: Bearer $TOKEN")
expect "/v1/me through nginx is 200" 200 "$status"
expect "/v1/me names the user" "$USERNAME" "$(field username)"
for _ in 1 2 3 4; do http GET "$EDGE/v1/me" -H "Authorization: Bearer $TOKEN" >/dev/null; done
check "nginx spreads requests over both replicas" \
    'grep -q "route=/v1/me" "${REPLICA_LOGS[0]}" && grep -q "route=/v1/me" "${REPLICA_LOGS[1]}"'

# --- request ids ----------------------------------------------------------------------
http GET "$EDGE/v1/me" -H "Authorization: Bearer $TOKEN" -H "X-Request-Id: itest-request-0001" >/dev/null
expect "a client's X-Request-Id comes back through nginx" itest-request-0001 "$(header x-request-id)"
check "... and is on the replica's log line" 'grep -q request_id=itest-request-0001 "${REPLICA_LOGS[@]}"'
http GET "$EDGE/healthz" >/dev/null
request_id=$(header x-request-id)
check "without one, nginx's \$request_id is passed on and comes back" 'grep -q "rid=$request_id " "$RUN/access.log"'
check "... and is on the replica's log line" 'grep -q "request_id=$request_id" "${REPLICA_LOGS[@]}"'
long_id=$(printf 'r%.0s' $(seq 200))
http GET "$EDGE/healthz" -H "X-Request-Id: $long_id" >/dev/null
request_id=$(header x-request-id)
check "an over-long X-Request-Id is replaced, consistently in nginx and the replica" \
    '[ "$request_id" != "$long_id" ] && grep -q "rid=$request_id " "$RUN/access.log" && grep -q "request_id=$request_id" "${REPLICA_LOGS[@]}"'

# --- client addresses (LR_LOGIN_FAILURES_PER_ADDRESS=3) --------------------------------
# failed_logins BASE_URL PREFIX [curl options]: four failed logins for four
# different unknown usernames (so only the address count can block); prints the statuses.
failed_logins() {
    local base=$1 prefix=$2 statuses=() i; shift 2
    for i in 1 2 3 4; do
        statuses+=("$(post_json "$base/v1/auth/login" "{\"username\": \"$prefix-$i\", \"password\": \"not the password 1\"}" \
            -H "X-Tenant: $TENANT" "${@//@I@/$i}")")
    done
    echo "${statuses[*]}"
}
expect "through nginx, one address: three failed logins, then 429" \
    "401 401 401 429" "$(failed_logins "$EDGE" ghost-a --interface 127.0.0.3)"
check "... a problem+json rate_limited with Retry-After" 'is_problem 429 rate_limited && [ -n "$(header retry-after)" ]'
check "the replica logs the client address nginx forwarded (127.0.0.3)" 'grep -q "client=127.0.0.3" "${REPLICA_LOGS[@]}"'
expect "another address through nginx is counted apart" \
    401 "$(post_json "$EDGE/v1/auth/login" '{"username": "ghost-b", "password": "not the password 1"}' -H "X-Tenant: $TENANT" --interface 127.0.0.4)"
expect "through nginx, a forged X-Forwarded-For does not escape the address count" \
    "401 401 401 429" "$(failed_logins "$EDGE" ghost-c --interface 127.0.0.5 -H 'X-Forwarded-For: 203.0.113.@I@')"
expect "directly, a forged X-Forwarded-For is not believed (counted against the peer)" \
    "401 401 401 429" "$(failed_logins "$REPLICA1" ghost-d --interface 127.0.0.6 -H 'X-Forwarded-For: 198.51.100.@I@')"
check "... the replica logs the peer (127.0.0.6), not the forged address" 'grep -q "client=127.0.0.6" "${REPLICA_LOGS[0]}"'
check "no forged address reached a log line" '! grep -qE "client=(203|198)\." "${REPLICA_LOGS[@]}"'

# --- what nginx answers itself ---------------------------------------------------------
expect "/metrics is not served through nginx" 404 "$(http GET "$EDGE/metrics")"
check "... the 404 is problem+json" 'is_problem 404 not_found'
expect "... nor through a dot-segment path" 404 "$(http GET "$EDGE/v1/../metrics" --path-as-is)"
expect "/metrics is served directly by a replica" 200 "$(http GET "$REPLICA1/metrics")"
check "... as Prometheus text" 'grep -q "^# TYPE" "$RESPONSE_BODY"'
expect "an unknown path through nginx is 404" 404 "$(http GET "$EDGE/wp-login.php")"
check "... problem+json with the request id" 'is_problem 404 not_found && [ "$(field request_id)" = "$(header x-request-id)" ]'

# The browser app: nginx serves web/ and Debian's Leaflet itself, with the service's headers.
expect "the app's page through nginx is 200 text/html" "200 text/html" \
    "$(http GET "$EDGE/") $(header content-type | cut -d';' -f1)"
EDGE_POLICY=$(header content-security-policy)
EDGE_ETAG=$(header etag)
http GET "$REPLICA1/" >/dev/null
expect "... with the same Content-Security-Policy as the service's" "$(header content-security-policy)" "$EDGE_POLICY"
check "... whose images come from the tiles' host as well (LR_NGINX_TILE_SOURCE, LR_MAP_TILE_URL)" \
    '[[ "$EDGE_POLICY" == *"img-src '"'self'"' data: blob: $TILE_SOURCE;"* ]]'
check "... which forbids inline script" '[[ "$EDGE_POLICY" == *"script-src '"'self'"';"* && "$EDGE_POLICY" != *unsafe-inline* ]]'
expect "... and an ETag that gives 304" 304 "$(http GET "$EDGE/" -H "If-None-Match: $EDGE_ETAG")"
expect "Leaflet through nginx is 200" 200 "$(http GET "$EDGE/vendor/leaflet/leaflet.js")"
expect "the app's configuration comes from the service" 200 "$(http GET "$EDGE/app-config.json")"
http GET "$EDGE/v1/users/query-probe/notes?q=secret-search-words&ticket=lr_st_notlogged" >/dev/null
logged_probe() {
    local deadline=$((SECONDS + 60))
    until grep -q "GET /v1/users/query-probe/notes HTTP" "$RUN/access.log"; do [ $SECONDS -lt $deadline ] || return 1; sleep 0.02; done
}
check "nginx logs paths without their query strings (tickets, searches)" \
    'logged_probe && ! grep -q "secret-search-words\|lr_st_notlogged" "$RUN/access.log"'

python3 -c 'import json; print(json.dumps({"username": "x" * 70000, "password": "y"}))' >"$WORK/big.json"
python3 -c 'import json; print(json.dumps({"username": "x" * 60000, "password": "y"}))' >"$WORK/large.json"
expect "a body over 64 KiB is refused by nginx with 413" 413 \
    "$(http POST "$EDGE/v1/auth/signup" -H 'Content-Type: application/json' -H 'Expect:' -H "X-Tenant: $TENANT" --data-binary @"$WORK/big.json")"
check "... problem+json payload_too_large with a request id" 'is_problem 413 payload_too_large && [ -n "$(header x-request-id)" ]'
expect "the replica's own limit agrees (413 directly)" 413 \
    "$(http POST "$REPLICA1/v1/auth/signup" -H 'Content-Type: application/json' -H 'Expect:' -H "X-Tenant: $TENANT" --data-binary @"$WORK/big.json")"
check "... problem+json payload_too_large" 'is_problem 413 payload_too_large'
expect "a 60 KiB body passes nginx to the service (422 for the username)" 422 \
    "$(http POST "$EDGE/v1/auth/signup" -H 'Content-Type: application/json' -H 'Expect:' -H "X-Tenant: $TENANT" --data-binary @"$WORK/large.json")"

status=$(post_json "$EDGE/v1/auth/login" "$CREDENTIALS" -H "X-Tenant: $TENANT" -H 'Accept-Encoding: gzip')
expect "JSON is gzipped through nginx when the client accepts it" "200 gzip" "$status $(header content-encoding)"
gunzipped_token() {
    python3 -c 'import gzip, json, sys; print(json.loads(gzip.decompress(open(sys.argv[1], "rb").read()))["access_token"][:6])' \
        "$RESPONSE_BODY" 2>/dev/null || true
}
expect "... and unzips to the token response" lr_at_ "$(gunzipped_token)"

# The edge limit on /v1/auth/ (10 r/s, burst 20): 40 requests from one address,
# back to back on one connection (curl's URL range), far faster than 10 a second.
# One line per response: status, Retry-After, X-Request-Id, content type; bodies in flood_N.
curl -s --max-time 10 --interface 127.0.0.7 -X POST -H 'Content-Type: application/json' -H "X-Tenant: $TENANT" \
    -d '{}' -o "$WORK/flood_#1" -w '%{http_code} %header{retry-after} %header{x-request-id} %{content_type}\n' \
    "$EDGE/v1/auth/login?n=[1-40]" >"$WORK/flood" 2>/dev/null || true
limited=$(grep -c '^429 ' "$WORK/flood" || true)
check "nginx's limit_req answers a flood on /v1/auth/ with 429 ($limited of 40)" '[ "$limited" -gt 0 ]'
# The last response of the flood is one of them; its body is in flood_40.
last_is_problem() {
    local status retry id type
    read -r status retry id type < <(tail -n 1 "$WORK/flood")
    [ "$status $retry $type" = "429 1 application/problem+json" ] && python3 - "$WORK/flood_40" "$id" <<'PY'
import json, sys
body = json.load(open(sys.argv[1]))
assert (body["code"], body["status"], body["request_id"]) == ("rate_limited", 429, sys.argv[2]), body
PY
}
check "... problem+json rate_limited, Retry-After, request id" 'last_is_problem'

expect "... other addresses are not limited" 200 "$(http GET "$EDGE/healthz" --interface 127.0.0.8)"

# The same edge limit on PATCH and DELETE /v1/me (they check the password), and
# none on GET /v1/me: 40 of each from one address each, back to back.
curl -s --max-time 10 --interface 127.0.0.9 -X PATCH -H 'Content-Type: application/json' -H "Authorization: Bearer $TOKEN" \
    -d '{}' -o /dev/null -w '%{http_code}\n' "$EDGE/v1/me?n=[1-40]" >"$WORK/me_flood" 2>/dev/null || true
limited=$(grep -c '^429' "$WORK/me_flood" || true)
check "nginx's limit_req answers a flood of PATCH /v1/me with 429 ($limited of 40)" '[ "$limited" -gt 0 ]'
curl -s --max-time 10 --interface 127.0.0.10 -H "Authorization: Bearer $TOKEN" \
    -o /dev/null -w '%{http_code}\n' "$EDGE/v1/me?n=[1-40]" >"$WORK/me_reads" 2>/dev/null || true
expect "... while 40 GET /v1/me from one address all pass" 40 "$(grep -c '^200' "$WORK/me_reads" || true)"

# --- TLS server (tls/landmark-remark.tls.conf.template, self-signed certificate) -------
tls=(--cacert "$LR_NGINX_TLS_CERTIFICATE" --resolve "localhost:$TLS_PORT:127.0.0.1")
expect "the TLS server proxies /readyz" 200 "$(http GET "https://localhost:$TLS_PORT/readyz" "${tls[@]}")"
expect "... over HTTP/2" 2 "$(curl -s --max-time 5 -o /dev/null -w '%{http_version}' --http2 "${tls[@]}" "https://localhost:$TLS_PORT/healthz" || true)"

# --- notes and events (landing in parallel: each checked once its endpoint exists) ---
# The event stream is opened first, through nginx, so that the note created
# next (on whichever replica nginx picks) must reach it over LISTEN/NOTIFY.
curl -sN --max-time 20 -D "$WORK/events.headers" -o "$WORK/events.stream" \
    -H "Authorization: Bearer $TOKEN" "$EDGE/v1/events" 2>/dev/null &
PIDS[event_stream]=$!
# wait_for_text FILE TEXT SECONDS
wait_for_text() {
    local deadline=$((SECONDS + $3))
    until grep -qF -- "$2" "$1" 2>/dev/null; do [ $SECONDS -lt $deadline ] || return 1; sleep 0.02; done
}
# Deadlines generous (a loaded machine is slow): nothing here is timed, only waited for.
wait_for_text "$WORK/events.headers" "HTTP/" 60 || true
EVENTS_STATUS=$(head -n 1 "$WORK/events.headers" 2>/dev/null | awk '{print $2}')
if [ "$EVENTS_STATUS" = 404 ]; then
    echo "SKIP event stream: events endpoint not present"
else
    expect "GET /v1/events through nginx is 200 text/event-stream" "200 text/event-stream" \
        "$EVENTS_STATUS $(tr -d '\r' <"$WORK/events.headers" | awk -F': ' 'tolower($1) == "content-type" { split($2, t, ";"); print t[1] }')"
    # Buffered, they would wait for the buffer to fill, which a stream's few bytes never do.
    check "... and its first bytes arrive while the stream is open (nothing buffers them)" \
        'wait_for_text "$WORK/events.stream" ": connected" 60'
fi

status=$(post_json "$EDGE/v1/notes" '{"body": "Integration: coffee by the quay", "lat": -33.8688, "lng": 151.2093}' \
    -H "Authorization: Bearer $TOKEN")
if [ "$status" = 404 ]; then
    echo "SKIP note round trip: notes endpoint not present"
else
    expect "note created through nginx is 201" 201 "$status"
    note_id=$(field id)
    location=$(header location)
    expect "... Location names it" "/v1/notes/$note_id" "$location"
    expect "the note reads back through nginx" "200 Integration: coffee by the quay" \
        "$(http GET "$EDGE$location" -H "Authorization: Bearer $TOKEN") $(field body)"
    status=$(http GET "$EDGE/v1/notes?near=-33.8688,151.2093&limit=1" -H "Authorization: Bearer $TOKEN")
    expect "... and is nearest first in the list" "200 $note_id" \
        "$status $(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["items"][0]["id"])' "$RESPONSE_BODY" 2>/dev/null)"
    if [ "$EVENTS_STATUS" = 200 ]; then
        # stream_has_note FILE: an SSE `note.created` event whose data is note $note_id.
        stream_has_note() {
            python3 - "$1" "$note_id" <<'PY'
import json, sys
for block in open(sys.argv[1]).read().split("\n\n"):
    fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line and not line.startswith(":"))
    if fields.get("event") == "note.created" and str(json.loads(fields.get("data", "{}")).get("id")) == sys.argv[2]:
        sys.exit(0)
sys.exit(1)
PY
        }
        deadline=$((SECONDS + 60))
        until stream_has_note "$WORK/events.stream" || [ $SECONDS -ge $deadline ]; do sleep 0.05; done
        check "the stream delivers note.created through nginx" 'stream_has_note "$WORK/events.stream"'
        first_event=$(sed -n 's/^id: //p' "$WORK/events.stream" | head -n 1)
        # Read until the event is there (not for a fixed 2 s, which a loaded machine outlasted).
        curl -sN --max-time 60 -o "$WORK/events.resumed" -H "Authorization: Bearer $TOKEN" \
            -H "Last-Event-ID: $((first_event - 1))" "$EDGE/v1/events" 2>/dev/null &
        resumed_stream=$!
        deadline=$((SECONDS + 60))
        until grep -q "^id: $first_event\$" "$WORK/events.resumed" 2>/dev/null || [ $SECONDS -ge $deadline ]; do sleep 0.05; done
        stop_pid "$resumed_stream"
        check "a reconnect with Last-Event-ID gets the event again" \
            'grep -q "^id: $first_event\$" "$WORK/events.resumed"'
    fi
fi
stop_pid "${PIDS[event_stream]}"; unset 'PIDS[event_stream]'

# --- what the logs must never hold ----------------------------------------------------
check "no password, token or note body in the replicas' or nginx's logs" \
    '! grep -qF -e "$PASSWORD" -e "$TOKEN" -e "coffee by the quay" "${REPLICA_LOGS[@]}" "$RUN/access.log" "$RUN/error.log"'

# --- failover and no replica ---------------------------------------------------------
stop_pid "${PIDS[replica1]}"; unset 'PIDS[replica1]'
codes=()
for _ in 1 2 3 4; do codes+=("$(http GET "$EDGE/v1/me" -H "Authorization: Bearer $TOKEN")"); done
expect "with replica 1 stopped, nginx sends everything to replica 2" "200 200 200 200" "${codes[*]}"
stop_pid "${PIDS[replica2]}"; unset 'PIDS[replica2]'
expect "with no replica, nginx answers 503" 503 "$(http GET "$EDGE/healthz")"
check "... problem+json unavailable with Retry-After" 'is_problem 503 unavailable && [ -n "$(header retry-after)" ]'
