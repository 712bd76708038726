# What an operator relies on, checked against the compose stack (sourced by
# scripts/test-container.sh once the stack is up, the demo tenant seeded): the README
# walkthrough and the web app through nginx, the replicas' user and read-only root,
# health when the database goes away, load shared by two replicas, a drain on
# `podman stop` without a failed request, and data kept across `down` and `up`.

# from CONTAINER HOST METHOD PATH [BODY]: an HTTP/1.0 request from inside CONTAINER to
# HOST:8080 on the stack's network, with bash's /dev/tcp as the image's health check does
# (the image has no curl); prints the response's status code. The replicas are published
# only through nginx, so a request meant for one replica goes from the other.
from() {
    podman exec "$1" bash -c '
        exec 3<>/dev/tcp/$1/8080
        printf "%s %s HTTP/1.0\r\nHost: localhost\r\nConnection: close\r\nX-Tenant: demo\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" \
            "$2" "$3" "${#4}" "$4" >&3
        timeout 60 head -n 1 <&3 | cut -d " " -f 2' _ "$2" "$3" "$4" "${5:-}"
}
# body_from CONTAINER HOST PATH: the whole response (headers and body) to a GET.
body_from() {
    podman exec "$1" bash -c 'exec 3<>/dev/tcp/$1/8080
        printf "GET %s HTTP/1.0\r\nHost: localhost\r\nConnection: close\r\n\r\n" "$2" >&3; timeout 5 cat <&3' _ "$2" "$3"
}

section "README walkthrough through nginx"
# The HTTP blocks ("Try it", "Notes, places and live events"); the last block calls the
# executable on the host, which this stack replaces with `compose run --rm migrate …` above.
WALKTHROUGH=$WORK/readme-walkthrough.sh
check "README: the HTTP walkthrough blocks extracted" \
    'python3 scripts/integration/readme-walkthrough.py README.md --blocks 2 >"$WALKTHROUGH"'
check "README: the walkthrough runs top to bottom through nginx with bash -euo pipefail" \
    '(cd "$ROOT" && env API="$EDGE" timeout 180 bash -euo pipefail "$WALKTHROUGH" >"$WORK/readme-walkthrough.log" 2>&1) ||
     { tail -n 20 "$WORK/readme-walkthrough.log"; false; }'

section "the web app and nginx"
expect "the web app's page is served at /" 200 "$(http GET "$EDGE/")"
check "... as HTML with a Content-Security-Policy naming the tile origin" \
    'header content-type | grep -q "^text/html" && header content-security-policy | grep -q "https://tile.openstreetmap.org"'
expect "Leaflet (Debian's, in nginx's image) is served" 200 "$(http GET "$EDGE/vendor/leaflet/leaflet.js")"
expect "/metrics is not served through nginx" 404 "$(http GET "$EDGE/metrics")"
http GET "$EDGE/healthz" -H "X-Request-Id: container-check-0001" >/dev/null
expect "a client's X-Request-Id comes back through nginx" container-check-0001 "$(header x-request-id)"
expect "a body over 64 KiB is refused with 413" 413 \
    "$(http POST "$EDGE/v1/auth/login" -H 'Content-Type: application/json' -H 'X-Tenant: demo' --data-binary @<(head -c 70000 /dev/zero | tr '\0' a))"
check "... as problem+json payload_too_large" 'is_problem 413 payload_too_large'

section "the replicas' process"
for api in "$API1" "$API2"; do
    expect "$api: the service runs as uid and gid 10001, not root" "10001 10001" \
        "$(podman exec "$api" awk '/^Uid:/ { uid = $2 } /^Gid:/ { gid = $2 } END { print uid, gid }' /proc/1/status)"
done
expect "the migrate container ran as the image's user too" landmark "$(podman inspect --format '{{.Config.User}}' "$(containers migrate)")"
expect "the replicas' root file system is read-only" true "$(podman inspect --format '{{.HostConfig.ReadonlyRootfs}}' "$API1")"
check "... and writing to it fails" '! podman exec "$API1" bash -c ": >/app/probe" 2>/dev/null'

section "health without the database"
DB=$(containers db)
podman stop -t 30 "$DB" >/dev/null 2>&1
# A failing check counts after three in a row (--retries=3), so it is run until then.
went_unhealthy() {
    poll 90 'podman healthcheck run "$API2" >/dev/null 2>&1; [ "$(health "$API2")" = unhealthy ]'
}
check "with the database stopped, a replica's health check turns unhealthy" went_unhealthy
expect "... and nginx answers /readyz 503 with problem details" 503 "$(http GET "$EDGE/readyz")"
check "... as problem+json unavailable" 'is_problem 503 unavailable'
podman start "$DB" >/dev/null 2>&1
check "with the database back, the database and both replicas turn healthy again" \
    'wait_healthy "$DB" 120 && wait_healthy "$API1" 120 && wait_healthy "$API2" 120 && [ "$(health "$API2")" = healthy ]'

section "two replicas share the load"
# A user of this check's own, and a note, for the requests below.
post_json "$EDGE/v1/auth/signup" '{"username": "container_check", "password": "a container check password"}' -H 'X-Tenant: demo' >/dev/null
TOKEN=$(field access_token)
expect "a note is saved through nginx" 201 "$(post_json "$EDGE/v1/notes" \
    '{"body": "Kept across compose down and up", "lat": -33.8570, "lng": 151.2150}' -H "Authorization: Bearer $TOKEN")"
NOTE_ID=$(field id)
for i in $(seq 1 40); do http GET "$EDGE/v1/notes/$NOTE_ID" -H "Authorization: Bearer $TOKEN" -H "X-Request-Id: share-$i" >/dev/null; done
served_by() { podman logs "$1" 2>&1 | grep -c 'share-[0-9]' || true; }
SHARE1=$(served_by "$API1"); SHARE2=$(served_by "$API2")
echo "     40 requests: $SHARE1 served by $API1, $SHARE2 by $API2"
check "both replicas served some of 40 requests, and together all of them" \
    '[ "$SHARE1" -gt 0 ] && [ "$SHARE2" -gt 0 ] && [ $((SHARE1 + SHARE2)) -eq 40 ]'

section "photos: decoded in a sandboxed worker inside the replica's container"
# A camera-like JPEG with a GPS position, made here with libvips' tools and exiftool.
vips black "$WORK/black.v" 1600 1200 --bands 3
vips draw_circle "$WORK/black.v" 200 800 600 300 --fill
vips jpegsave "$WORK/black.v" "$WORK/camera.jpg" --Q 92
exiftool -q -q -overwrite_original -GPSLatitude=33.8568 -GPSLatitudeRef=S "$WORK/camera.jpg"
status=$(HTTP_MAX_TIME=60 http POST "$EDGE/v1/notes/$NOTE_ID/photos" -H "Authorization: Bearer $TOKEN" \
    -H 'Content-Type: image/jpeg' --data-binary "@$WORK/camera.jpg")
expect "a photo upload through nginx is decoded and stored (201)" 201 "$status"
if [ "$status" != 201 ]; then cat "$RESPONSE_BODY"; echo; fi
PHOTO_URL=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["variants"]["thumb"]["url"])' "$RESPONSE_BODY" 2>/dev/null || true)
expect "its thumbnail through nginx (fetched once)" "200 MISS" \
    "$(http GET "$EDGE$PHOTO_URL" -H "Authorization: Bearer $TOKEN") $(header x-lr-photo-cache)"
cp "$RESPONSE_BODY" "$WORK/thumb.jpg"
expect "... then from nginx's cache in its container" "200 HIT" \
    "$(http GET "$EDGE$PHOTO_URL" -H "Authorization: Bearer $TOKEN") $(header x-lr-photo-cache)"
expect "... 256 pixels wide, without the GPS position" "256 " \
    "$(exiftool -q -q -s3 -ImageWidth "$WORK/thumb.jpg") $(exiftool -q -q -s3 -GPSLatitude "$WORK/thumb.jpg")"
expect "the replica ran its worker in bubblewrap (no fallback logged)" 0 \
    "$(podman logs "$API1" 2>&1 | grep -c 'photo worker unavailable\|photo workers cannot run' || true)"

section "podman stop drains a request and loses none"
# A signup hashes at the production scrypt cost (N=2^17, about a second here): the slow
# request, sent from replica 2 to replica 1, then `podman stop` of replica 1 while it hashes.
from "$API2" "$API1" POST /v1/auth/signup '{"username": "drained_signup", "password": "a slow but fine password"}' >"$WORK/slow.status" 2>&1 &
SLOW_PID=$!
hashing() { body_from "$API2" "$API1" /metrics 2>/dev/null | grep -q '^lr_password_hashing_in_flight [1-9]'; }
deadline=$((SECONDS + 60)); was_hashing=no
until [ $SECONDS -ge $deadline ]; do if hashing; then was_hashing=yes; break; fi; sleep 0.05; done
expect "the slow signup was hashing when podman stop was sent" yes "$was_hashing"
# Meanwhile a client reads through nginx until replica 1 is gone and a while after; every
# answer must be 200 (nginx moves on to replica 2 when replica 1 refuses a connection).
python3 - "$EDGE" "$NOTE_ID" "$TOKEN" "$WORK/stopped" >"$WORK/load.result" <<'PY' &
import http.client, os, sys, time, urllib.parse
edge, note, token, stopped = sys.argv[1:]
url = urllib.parse.urlparse(edge)
counts, after, deadline = {}, 0, time.monotonic() + 120
while after < 100 and time.monotonic() < deadline:
    try:
        connection = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
        connection.request("GET", f"/v1/notes/{note}", headers={"Authorization": f"Bearer {token}"})
        status = connection.getresponse().status
        connection.close()
    except OSError as error:
        status = type(error).__name__
    counts[status] = counts.get(status, 0) + 1
    if os.path.exists(stopped):
        after += 1
print(" ".join(f"{key}:{value}" for key, value in sorted(counts.items(), key=str)))
PY
LOAD_PID=$!
STOP_START=$SECONDS
podman stop -t 15 "$API1" >/dev/null 2>&1
STOP_TOOK=$((SECONDS - STOP_START))
: >"$WORK/stopped"
wait "$SLOW_PID" || true
expect "the request in flight at podman stop completes with 201" 201 "$(cat "$WORK/slow.status")"
expect "the replica exits 0 (it was not killed at the grace period's end)" 0 "$(podman inspect --format '{{.State.ExitCode}}' "$API1")"
echo "     podman stop took $STOP_TOOK s (grace period 15 s)"
wait "$LOAD_PID" || true
LOAD_PID=""
LOAD=$(cat "$WORK/load.result")
echo "     reads through nginx during the stop: $LOAD"
check "every read through nginx during the stop was answered 200" '[[ "$LOAD" =~ ^200:[0-9]+$ ]]'
podman start "$API1" >/dev/null 2>&1
check "the stopped replica starts again and turns healthy" 'wait_healthy "$API1" 120'

section "data survives compose down and up"
check "compose down (keeping the database's volume)" 'compose down >"$WORK/down.log" 2>&1 || { cat "$WORK/down.log"; false; }'
check "no container of the stack is left" '[ -z "$(podman ps -a --filter "label=com.docker.compose.project=$PROJECT" -q)" ]'
check "compose up again: migrate exits 0 and everything turns healthy" 'stack_up'
expect "... migrate found the schema current" "schema is current" "$(podman logs "$(containers migrate)" 2>&1 | tail -n 1)"
API1=$(containers api | sed -n 1p)
expect "the note saved before is still there, through nginx" 200 "$(http GET "$EDGE/v1/notes/$NOTE_ID" -H "Authorization: Bearer $TOKEN")"
expect "... with its text" "Kept across compose down and up" "$(field body)"
