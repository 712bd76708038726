-- search-keshiki: GET /v1/notes?q=景色&in=body&limit=50 (a common two-character word: in a third of the Japanese notes, ~1% of all)
-- The SQL of NoteStore.newestStatement (walk, then the text index window by window, the first sized by the walk); prepared, as the service runs it.
-- pgbench-protocol: prepared
\set lim 51
SELECT '景色' AS q \gset
BEGIN;
SELECT set_config('app.tenant_id', :tenant, true);
-- @newest-walk[windows+pairs]: n.tenant_id = :tenant AND (n.visibility = 'public' OR n.user_id = :viewer) AND strpos(n.body_folded, (SELECT search_fold(:q))) > 0
COMMIT;
