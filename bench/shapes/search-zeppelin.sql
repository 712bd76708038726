-- search-zeppelin: GET /v1/notes?q=zeppelin&in=body&limit=50 (0.2% of notes)
-- The SQL of NoteStore.newestStatement (walk, then the text index window by window, the first sized by the walk); prepared, as the service runs it.
-- pgbench-protocol: prepared
\set lim 51
SELECT '%zeppelin%' AS p \gset
BEGIN;
SELECT set_config('app.tenant_id', :tenant, true);
-- @newest-walk[windows]: n.tenant_id = :tenant AND (n.visibility = 'public' OR n.user_id = :viewer) AND n.body_folded LIKE :p
COMMIT;
