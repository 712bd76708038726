-- nearest-page1: GET /v1/notes?near=51.5074,-0.1278&radius_m=10000&limit=50 (first page of nearest-page10) (walks in degrees through notes_location_lnglat since session 26: PlanarWalk)
-- pgbench-protocol: prepared
\set lim 51
\set radius 10000
\set lat 51.5074
\set lng -0.1278
BEGIN;
SELECT set_config('app.tenant_id', :tenant, true);
-- @nearest-page:
COMMIT;
