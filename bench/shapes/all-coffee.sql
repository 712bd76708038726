-- all-coffee: GET /v1/notes?q=coffee&limit=50 (in=all; no username matches, so the body alone)
-- The SQL of NoteList.newestStatement (walk, walk further, or the matches window by window); prepared, as the service runs it.
-- pgbench-protocol: prepared
\set lim 51
SELECT '%coffee%' AS p \gset
BEGIN;
SELECT set_config('app.tenant_id', :tenant, true);
-- @newest-walk[windowed]: n.tenant_id = :tenant AND (n.visibility = 'public' OR n.user_id = :viewer) AND n.body_folded LIKE :p
COMMIT;
