-- search-coffee-near: GET /v1/notes?q=coffee&in=body&near=<London ±5 km>&radius_m=10000&limit=50 (bounded KNN walk in degrees through notes_location_lnglat since session 26, stopping at its page's last match; else every match in range through the cells that cover its circle's box: migration 0038)
-- The word is a parameter and the statement prepared, as the service plans it once (NoteFilters.isPlannedOnce, session 26).
-- pgbench-protocol: prepared
\set lim 51
\set radius 10000
\set walk 2000
\set nwalk 500
\set lat 51.5074 + random(-5000, 5000) / 111320.0
\set lng -0.1278 + random(-5000, 5000) / 111320.0 * 1.606648816
SELECT '%coffee%' AS word \gset
BEGIN;
SELECT set_config('app.tenant_id', :tenant, true);
-- @nearest-word: n.body_folded LIKE :word
COMMIT;
