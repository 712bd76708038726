-- nearest-sparse: GET /v1/notes?near=<Reykjavik ±5 km>&radius_m=10000&limit=50 (walks in degrees through notes_location_lnglat since session 26: PlanarWalk)
-- pgbench-protocol: prepared
\set lim 51
\set radius 10000
\set lat 64.1466 + random(-5000, 5000) / 111320.0
\set lng -21.9426 + random(-5000, 5000) / 111320.0 * 2.29320974
BEGIN;
SELECT set_config('app.tenant_id', :tenant, true);
-- @nearest-page:
COMMIT;
