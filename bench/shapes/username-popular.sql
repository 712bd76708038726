-- username-popular: GET /v1/notes?q=kim&in=username&limit=50 (5,000 kim.* users at 10M, 500 at 1M: more than the 200 resolved up front)
-- The SQL of NoteStore.newestStatement for many authors matched by name (NoteFilters.Authors.many,
-- session 27): the names looked up with LIMIT 201 first, then the newest notes walked, each
-- one's author's name tested through the users' primary key. The every-match branch here
-- repeats the walk's test; the service asks for the authors' ids there (it never runs for kim).
-- pgbench-protocol: prepared
\set lim 51
SELECT '%kim%' AS p \gset
BEGIN;
SELECT set_config('app.tenant_id', :tenant, true);
SELECT u.id FROM tenant_users u WHERE u.tenant_id = :tenant AND u.username_folded LIKE :p LIMIT 201;
-- @newest-walk[further]: n.tenant_id = :tenant AND (n.visibility = 'public' OR n.user_id = :viewer) AND (SELECT au.username_folded FROM tenant_users au WHERE au.tenant_id = :tenant AND au.id = n.user_id) LIKE :p
COMMIT;
