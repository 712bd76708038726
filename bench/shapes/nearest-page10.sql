-- nearest-page10: GET /v1/notes?near=51.5074,-0.1278&radius_m=10000&limit=50&cursor=<after the 450th>
-- pgbench-protocol: prepared
\set lim 51
\set radius 10000
\set lat 51.5074
\set lng -0.1278
BEGIN;
SELECT set_config('app.tenant_id', :tenant, true);
WITH sphere_nearest AS (
    SELECT ST_Distance(n.location, ST_SetSRID(ST_MakePoint(:lng, :lat), 4326)::geography) AS distance
    FROM tenant_notes n
    WHERE n.tenant_id = :tenant
  AND (n.visibility = 'public' OR n.user_id = :viewer)
  AND ST_DWithin(n.location, ST_SetSRID(ST_MakePoint(:lng, :lat), 4326)::geography, :radius)
  AND (ST_Distance(n.location, ST_SetSRID(ST_MakePoint(:lng, :lat), 4326)::geography), n.id) > (:near_dist10::float8, :near_id10)
    ORDER BY n.location <-> ST_SetSRID(ST_MakePoint(:lng, :lat), 4326)::geography
    LIMIT :lim
),
page AS (
    SELECT n.*, ST_Distance(n.location, ST_SetSRID(ST_MakePoint(:lng, :lat), 4326)::geography) AS distance
    FROM tenant_notes n
    WHERE n.tenant_id = :tenant
  AND (n.visibility = 'public' OR n.user_id = :viewer)
  AND ST_DWithin(n.location, ST_SetSRID(ST_MakePoint(:lng, :lat), 4326)::geography, :radius)
  AND (ST_Distance(n.location, ST_SetSRID(ST_MakePoint(:lng, :lat), 4326)::geography), n.id) > (:near_dist10::float8, :near_id10)
      AND ST_DWithin(n.location, ST_SetSRID(ST_MakePoint(:lng, :lat), 4326)::geography, (SELECT max(distance) + 0.001 FROM sphere_nearest))
    ORDER BY distance, n.id
    LIMIT :lim
)
SELECT n.id, n.body, ST_Y(n.location::geometry), ST_X(n.location::geometry), n.user_id, u.username,
       n.visibility, n.place_id, n.created_at, n.updated_at, n.distance
FROM page n
JOIN tenant_users u ON u.tenant_id = n.tenant_id AND u.id = n.user_id
ORDER BY n.distance, n.id;
COMMIT;
