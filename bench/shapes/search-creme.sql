-- search-creme: GET /v1/notes?q=creme&in=body&limit=50 (folded: finds crème, in the French notes)
-- The SQL of NoteStore.newestStatement (walk, then the text index window by window, the first sized by the walk); prepared, as the service runs it.
-- pgbench-protocol: prepared
\set lim 51
SELECT 'creme' AS q \gset
BEGIN;
SELECT set_config('app.tenant_id', :tenant, true);
-- @newest-walk[windows]: n.tenant_id = :tenant AND (n.visibility = 'public' OR n.user_id = :viewer) AND n.body_folded LIKE (SELECT search_pattern(:q))
COMMIT;
