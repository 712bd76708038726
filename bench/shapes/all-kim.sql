-- all-kim: GET /v1/notes?q=kim&limit=50 (in=all: body or one of the kim.* users, 5,000 at 10M, 500 at 1M)
-- The SQL of NoteStore.newestStatement (walk, walk further, or every match), prepared. More
-- authors match than the 200 resolved up front (session 27), so the walks test each note's
-- author's name through the users' primary key where the body does not match. The every-match
-- branch here repeats the walk's test; the service asks for the authors' ids there (it never runs for kim).
-- pgbench-protocol: prepared
\set lim 51
SELECT '%kim%' AS p \gset
BEGIN;
SELECT set_config('app.tenant_id', :tenant, true);
SELECT u.id FROM tenant_users u WHERE u.tenant_id = :tenant AND u.username_folded LIKE :p LIMIT 201;
-- @newest-walk[further]: n.tenant_id = :tenant AND (n.visibility = 'public' OR n.user_id = :viewer) AND (n.body_folded LIKE :p OR (SELECT au.username_folded FROM tenant_users au WHERE au.tenant_id = :tenant AND au.id = n.user_id) LIKE :p)
COMMIT;
