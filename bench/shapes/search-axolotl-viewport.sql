-- search-axolotl-viewport: GET /v1/notes?q=axolotl&in=body&bbox=<10 km box in London>&limit=50
-- The SQL of NoteStore.newestStatement (walk, walk further, or every match through the cells that cover the box: migration 0038); prepared, as the service runs it (since 0038).
-- pgbench-protocol: prepared
\set lim 51
\set min_lng -0.1278 - 0.045 * 1.606648816 + random(-1000, 1000) / 111320.0
\set max_lng :min_lng + 0.09 * 1.606648816
\set min_lat 51.5074 - 0.045 + random(-1000, 1000) / 111320.0
\set max_lat :min_lat + 0.09
SELECT '%axolotl%' AS p \gset
BEGIN;
SELECT set_config('app.tenant_id', :tenant, true);
-- @newest-walk[further+cells]: n.tenant_id = :tenant AND (n.visibility = 'public' OR n.user_id = :viewer) AND (ST_Y(n.location::geometry) BETWEEN :min_lat AND :max_lat AND (ST_X(n.location::geometry) BETWEEN :min_lng AND :max_lng)) AND n.body_folded LIKE :p
COMMIT;
