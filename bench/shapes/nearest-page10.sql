-- nearest-page10: GET /v1/notes?near=51.5074,-0.1278&radius_m=10000&limit=50&cursor=<after the 450th> (walks in degrees through notes_location_lnglat since session 26: PlanarWalk)
-- pgbench-protocol: prepared
\set lim 51
\set radius 10000
\set lat 51.5074
\set lng -0.1278
BEGIN;
SELECT set_config('app.tenant_id', :tenant, true);
-- @nearest-page: AND (ST_Distance(n.location, ST_SetSRID(ST_MakePoint(:lng, :lat), 4326)::geography), n.id) > (:near_dist10::float8, :near_id10)
COMMIT;
