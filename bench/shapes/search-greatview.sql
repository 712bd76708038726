-- search-greatview: GET /v1/notes?q=great view&in=body&limit=50 (a phrase in 1.2% of notes)
-- The SQL of NoteStore.newestStatement for a phrase (walk, walk further, then the text index window by window); prepared, as the service runs it.
-- pgbench-protocol: prepared
\set lim 51
SELECT '%great view%' AS p \gset
BEGIN;
SELECT set_config('app.tenant_id', :tenant, true);
-- @newest-walk[further+windows]: n.tenant_id = :tenant AND (n.visibility = 'public' OR n.user_id = :viewer) AND n.body_folded LIKE :p
COMMIT;
