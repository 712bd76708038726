# Backup and restore (sourced by scripts/test-integration.sh), as
# docs/operations.md describes it: pg_dump in custom format, a fresh database
# (from template0, so nothing is there that the dump does not bring), the roles
# already present (they are global, not in a database dump), pg_restore, and a
# replica serving the restored database.

section "backup and restore"
DUMP=$WORK/landmark_remark.dump
RESTORED=lr_integration_restored
check "pg_dump --format=custom of the live database" \
    '"$PGBIN/pg_dump" --format=custom --file="$DUMP" "$(db_url postgres "$DATABASE")"'
new_database "$RESTORED" template0
check "pg_restore into a fresh database" \
    '"$PGBIN/pg_restore" --exit-on-error --dbname="$(db_url postgres "$RESTORED")" "$DUMP"'
# On Citus the dump holds every shard's rows, restored into the coordinator's own tables;
# distributing moves them out to the workers again.
[ -z "$CITUS" ] || check "distribute the restored database" 'distribute "$RESTORED" >>"$WORK/distribute.log" 2>&1'

PORT5=$(free_port)
REPLICA5=http://127.0.0.1:$PORT5
start_replica restored "$PORT5" "$RESTORED"
check "a replica on the restored database is ready (/readyz 200)" 'wait_for_status "$REPLICA5/readyz" 200 30'
# From an address of its own: the dump carries the login counts of 127.0.0.1.
status=$(post_json "$REPLICA5/v1/auth/login" "$CREDENTIALS" -H "X-Tenant: $TENANT" --interface 127.0.0.9)
expect "a user created before the dump logs in" 200 "$status"
RESTORED_TOKEN=$(field access_token)
expect "... and is the same account" "$USERNAME" "$(http GET "$REPLICA5/v1/me" -H "Authorization: Bearer $RESTORED_TOKEN" >/dev/null; field username)"
expect "a session from before the dump is still valid" 200 "$(http GET "$REPLICA5/v1/me" -H "Authorization: Bearer $TOKEN")"
status=$(http GET "$REPLICA5$PHOTO_PATH" -H "Authorization: Bearer $TOKEN"); cp "$RESPONSE_BODY" "$WORK/photos/restored.jpg"
expect "a photo from before the dump is served by the restored replica" 200 "$status"
expect "... byte for byte" "$PHOTO_SHA" "$(sha256sum <"$WORK/photos/restored.jpg" | cut -c1-64)"
