-- nearest-dense: GET /v1/notes?near=<London centre ±5 km>&radius_m=10000&limit=50 (walks in degrees through notes_location_lnglat since session 26: PlanarWalk)
-- pgbench-protocol: prepared
\set lim 51
\set radius 10000
\set lat 51.5074 + random(-5000, 5000) / 111320.0
\set lng -0.1278 + random(-5000, 5000) / 111320.0 * 1.606648816
BEGIN;
SELECT set_config('app.tenant_id', :tenant, true);
-- @nearest-page:
COMMIT;
