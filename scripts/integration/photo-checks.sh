# Photos through nginx and two replicas (sourced by scripts/test-integration.sh, after
# nginx-checks.sh, whose $TOKEN it uses): an upload larger than the API's 64 KB body limit
# passes nginx's photo location, each replica serves the same bytes (they live in the
# database, not on a replica's disk), and backup-checks.sh finds them after a restore
# ($PHOTO_PATH, $PHOTO_SHA).

section "photos through nginx, on two replicas"
# nginx-checks.sh ended with both replicas stopped: the same two ports serve again here,
# and are stopped again at the end (deploy-checks.py wants replica 1's port closed).
start_replica replica1-photos "$PORT1" "$DATABASE"
start_replica replica2-photos "$PORT2" "$DATABASE"
check "replica 1 is back (/healthz)" 'wait_for_status "$REPLICA1/healthz" 200 30'
check "replica 2 is back (/healthz)" 'wait_for_status "$REPLICA2/healthz" 200 30'
# nginx counts a server that failed as down for its fail_timeout (10 s): wait until it tries again.
check "nginx reaches them again" 'wait_for_status "$EDGE/readyz" 200 30'
PHOTO_DIR=$WORK/photos
mkdir -p "$PHOTO_DIR"
# A camera-like JPEG of a few megabytes, with a GPS position that must not come out.
vips gaussnoise "$PHOTO_DIR/noise.v" 2400 1800 --sigma 60 --mean 128
vips bandjoin "$PHOTO_DIR/noise.v $PHOTO_DIR/noise.v $PHOTO_DIR/noise.v" "$PHOTO_DIR/rgb.v"
vips cast "$PHOTO_DIR/rgb.v" "$PHOTO_DIR/rgb8.v" uchar
vips jpegsave "$PHOTO_DIR/rgb8.v" "$PHOTO_DIR/camera.jpg" --Q 95
exiftool -q -q -overwrite_original -GPSLatitude=33.8568 -GPSLatitudeRef=S -GPSLongitude=151.2153 -GPSLongitudeRef=E "$PHOTO_DIR/camera.jpg"
head -c 16500000 /dev/urandom >"$PHOTO_DIR/too-large.jpg"

status=$(post_json "$EDGE/v1/notes" '{"body": "The view from the point", "lat": -33.8568, "lng": 151.2153}' -H "Authorization: Bearer $TOKEN")
expect "a note for the photos" 201 "$status"
PHOTO_NOTE=$(field id)
size=$(stat -c %s "$PHOTO_DIR/camera.jpg")
status=$(HTTP_MAX_TIME=60 http POST "$EDGE/v1/notes/$PHOTO_NOTE/photos" -H "Authorization: Bearer $TOKEN" \
    -H 'Content-Type: image/jpeg' --data-binary "@$PHOTO_DIR/camera.jpg")
expect "a $size-byte photo passes nginx and is stored (201)" 201 "$status"
PHOTO_PATH=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["variants"]["display"]["url"])' "$RESPONSE_BODY" 2>/dev/null || true)
expect "... as three variants, 1280 pixels for display" "1280" "$(python3 -c 'import json,sys; v=json.load(open(sys.argv[1]))["variants"]["display"]; print(max(v["width"], v["height"]))' "$RESPONSE_BODY" 2>/dev/null)"
status=$(http GET "$REPLICA1$PHOTO_PATH" -H "Authorization: Bearer $TOKEN"); cp "$RESPONSE_BODY" "$PHOTO_DIR/one.jpg"
expect "replica 1 serves the variant" 200 "$status"
status=$(http GET "$REPLICA2$PHOTO_PATH" -H "Authorization: Bearer $TOKEN"); cp "$RESPONSE_BODY" "$PHOTO_DIR/two.jpg"
expect "replica 2 serves the variant" 200 "$status"
PHOTO_ETAG=$(header etag)
PHOTO_SHA=$(sha256sum <"$PHOTO_DIR/one.jpg" | cut -c1-64)
expect "... the same bytes from both (they live in the database)" "$PHOTO_SHA" "$(sha256sum <"$PHOTO_DIR/two.jpg" | cut -c1-64)"
expect "... without the GPS position" "" "$(exiftool -q -q -GPSLatitude -s3 "$PHOTO_DIR/one.jpg")"
status=$(http GET "$EDGE$PHOTO_PATH" -H "Authorization: Bearer $TOKEN" -H "If-None-Match: $PHOTO_ETAG")
expect "through nginx, If-None-Match with its ETag is 304" 304 "$status"

# Through nginx, the replica only decides (X-Accel-Redirect); nginx sends the bytes, from
# its cache once it has them, each time after a replica's check.
edge_variant() {  # edge_variant TOKEN FILE: GET $PHOTO_PATH through nginx into FILE
    local status
    status=$(http GET "$EDGE$PHOTO_PATH" -H "Authorization: Bearer $1"); cp "$RESPONSE_BODY" "$2"
    echo "$status"
}
expect "through nginx, the variant is 200" 200 "$(edge_variant "$TOKEN" "$PHOTO_DIR/edge-1.jpg")"
expect "... fetched from a replica the first time (MISS)" MISS "$(header x-lr-photo-cache)"
expect "... the same bytes" "$PHOTO_SHA" "$(sha256sum <"$PHOTO_DIR/edge-1.jpg" | cut -c1-64)"
expect "... with the variant's ETag" "$PHOTO_ETAG" "$(header etag)"
expect "... as a JPEG" "image/jpeg" "$(header content-type)"
expect "... private to the viewer" "private, max-age=31536000, immutable" "$(header cache-control)"
expect "... and no X-Accel-Redirect reaches the client" "" "$(header x-accel-redirect)"
expect "again through nginx: 200" 200 "$(edge_variant "$TOKEN" "$PHOTO_DIR/edge-2.jpg")"
expect "... from nginx's cache (HIT)" HIT "$(header x-lr-photo-cache)"
expect "... the same bytes" "$PHOTO_SHA" "$(sha256sum <"$PHOTO_DIR/edge-2.jpg" | cut -c1-64)"
status=$(http GET "$REPLICA1$PHOTO_PATH" -H "Authorization: Bearer $TOKEN" -H "X-LR-Photo-Accel: 1")
expect "a replica asked directly with nginx's header answers the decision, without bytes" "0" "$(stat -c %s "$RESPONSE_BODY")"
expect "... naming nginx's internal location" "/_lr_photo/" "$(header x-accel-redirect | cut -c1-11)"
status=$(http GET "$EDGE$(header x-accel-redirect)" -H "Authorization: Bearer $TOKEN")
expect "the internal location is not reachable from outside (404)" 404 "$status"
status=$(http GET "$EDGE$PHOTO_PATH" -H "Authorization: Bearer $TOKEN" -H "X-LR-Photo-Accel: 0")
expect "a client's own X-LR-Photo-Accel changes nothing (200)" "200 HIT" "$status $(header x-lr-photo-cache)"
# Someone else, once the note is private, gets 404 although nginx holds the bytes.
status=$(post_json "$EDGE/v1/auth/signup" '{"username": "bob_photos_it", "password": "correct horse photos"}' -H "X-Tenant: $TENANT")
expect "another user signs up" 201 "$status"
OTHER_TOKEN=$(field access_token)
expect "the public note's photo is theirs to see (cached: HIT)" "200 HIT" \
    "$(edge_variant "$OTHER_TOKEN" "$PHOTO_DIR/other.jpg") $(header x-lr-photo-cache)"
status=$(http PATCH "$EDGE/v1/notes/$PHOTO_NOTE" -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
    --data-binary '{"visibility": "private"}')
expect "the author makes the note private" 200 "$status"
expect "... and the other user's request for the cached variant is 404" 404 "$(edge_variant "$OTHER_TOKEN" "$PHOTO_DIR/other.jpg")"
expect "... a problem, not the bytes" "application/problem+json" "$(header content-type)"
expect "the author still gets it" 200 "$(edge_variant "$TOKEN" "$PHOTO_DIR/edge-3.jpg")"

status=$(HTTP_MAX_TIME=60 http POST "$EDGE/v1/notes/$PHOTO_NOTE/photos" -H "Authorization: Bearer $TOKEN" \
    -H 'Content-Type: image/jpeg' --data-binary "@$PHOTO_DIR/too-large.jpg")
expect "an upload over nginx's photo limit is 413 at the edge" 413 "$status"
status=$(http GET "$EDGE$PHOTO_PATH")
expect "without a token, a variant is 401" 401 "$status"
status=$(post_json "$EDGE/v1/places" '{"name": "The lookout", "lat": -33.8569, "lng": 151.2152}' -H "Authorization: Bearer $TOKEN")
expect "a place of the author's" 201 "$status"
status=$(HTTP_MAX_TIME=60 http POST "$EDGE/v1/places/$(field id)/photos" -H "Authorization: Bearer $TOKEN" \
    -H 'Content-Type: image/jpeg' --data-binary "@$PHOTO_DIR/camera.jpg")
expect "a $size-byte photo of a place passes nginx too (201)" 201 "$status"
usage=$("$PGBIN/psql" -X -At "$(db_url landmark_owner "$DATABASE")" -c "SELECT photos FROM admin.photo_usage() WHERE tenant = '$TENANT'" 2>&1)
expect "admin.photo_usage() counts the tenant's photos" 2 "$usage"
stop_pid "${PIDS[replica1-photos]}"; unset 'PIDS[replica1-photos]'
stop_pid "${PIDS[replica2-photos]}"; unset 'PIDS[replica2-photos]'
