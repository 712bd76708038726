-- all-kim: GET /v1/notes?q=kim&limit=50 (in=all: body or one of the 500 kim.* users; usernames resolved first)
-- The SQL of NoteStore.newestStatement (walk, walk further, or every match); prepared since session 23, the ids one array parameter that the walks test as a hashed subplan (the service's every-match branch asks `= ANY` instead, for the author index; for kim it never runs).
-- pgbench-protocol: prepared
\set lim 51
SELECT '%kim%' AS p \gset
BEGIN;
SELECT set_config('app.tenant_id', :tenant, true);
SELECT coalesce(array_agg(u.id), '{}')::text AS ids FROM (SELECT u.id FROM tenant_users u
WHERE u.tenant_id = :tenant AND u.username_folded LIKE :p) u \gset
-- @newest-walk[further]: n.tenant_id = :tenant AND (n.visibility = 'public' OR n.user_id = :viewer) AND (n.body_folded LIKE :p OR n.user_id IN (SELECT unnest(:ids::int8[])))
COMMIT;
