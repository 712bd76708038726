-- search-pair-none: GET /v1/notes?q=qj&in=body&limit=50 (an ASCII pair no note holds: every window is asked and each answers nothing)
-- The SQL of NoteStore.newestStatement (walk, then the text index window by window, the first sized by the walk); prepared, as the service runs it.
-- pgbench-protocol: prepared
\set lim 51
SELECT 'qj' AS q \gset
BEGIN;
SELECT set_config('app.tenant_id', :tenant, true);
-- @newest-walk[windows+pairs]: n.tenant_id = :tenant AND (n.visibility = 'public' OR n.user_id = :viewer) AND strpos(n.body_folded, (SELECT search_fold(:q))) > 0
COMMIT;
