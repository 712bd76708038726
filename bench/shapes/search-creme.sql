-- search-creme: GET /v1/notes?q=creme&in=body&limit=50 (folded: finds crème, in the French notes)
-- The SQL of NoteList.newestStatement (walk, walk further, or every match); prepared, as the service runs it.
-- pgbench-protocol: prepared
\set lim 51
SELECT 'creme' AS q \gset
BEGIN;
SELECT set_config('app.tenant_id', :tenant, true);
-- @newest-walk: n.tenant_id = :tenant AND (n.visibility = 'public' OR n.user_id = :viewer) AND n.body_folded LIKE search_pattern(:q)
COMMIT;
