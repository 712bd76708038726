-- search-coffee-near: GET /v1/notes?q=coffee&in=body&near=<London ±5 km>&radius_m=10000&limit=50 (bounded KNN walk, stopping at its page's last match; else every match in range through the cells that cover its circle's box: migration 0038)
-- pgbench-protocol: extended
\set lim 51
\set radius 10000
\set walk 2000
\set nwalk 500
\set lat 51.5074 + random(-5000, 5000) / 111320.0
\set lng -0.1278 + random(-5000, 5000) / 111320.0 * 1.606648816
BEGIN;
SELECT set_config('app.tenant_id', :tenant, true);
WITH walk AS MATERIALIZED (
    SELECT ST_Distance(n.location, ST_SetSRID(ST_MakePoint(:lng, :lat), 4326)::geography) AS distance, n.matched, n.position
    FROM (
        SELECT n.*, row_number() OVER (ORDER BY n.sphere) AS position
        FROM (
            SELECT n.*, n.location <-> ST_SetSRID(ST_MakePoint(:lng, :lat), 4326)::geography AS sphere, (n.tenant_id = :tenant
  AND (n.visibility = 'public' OR n.user_id = :viewer)
  AND ST_DWithin(n.location, ST_SetSRID(ST_MakePoint(:lng, :lat), 4326)::geography, :radius)
  AND n.body_folded LIKE '%coffee%') AS matched
            FROM tenant_notes n
            WHERE n.tenant_id = :tenant
  AND (n.visibility = 'public' OR n.user_id = :viewer)
  AND ST_DWithin(n.location, ST_SetSRID(ST_MakePoint(:lng, :lat), 4326)::geography, :radius)
            ORDER BY sphere
            LIMIT :nwalk
        ) n
    ) n
    WHERE n.matched OR n.position = :nwalk
    ORDER BY n.sphere
    LIMIT :lim
),
sphere_nearest AS (
    SELECT distance FROM walk WHERE matched
),
decided AS (
    SELECT (SELECT count(*) FROM sphere_nearest) = :lim
           OR NOT EXISTS (SELECT FROM walk WHERE position = :nwalk) AS by_walk
),
by_walk AS MATERIALIZED (
    SELECT n.*, ST_Distance(n.location, ST_SetSRID(ST_MakePoint(:lng, :lat), 4326)::geography) AS distance
    FROM tenant_notes n
    WHERE n.tenant_id = :tenant
  AND (n.visibility = 'public' OR n.user_id = :viewer)
  AND ST_DWithin(n.location, ST_SetSRID(ST_MakePoint(:lng, :lat), 4326)::geography, :radius)
  AND n.body_folded LIKE '%coffee%'
      AND (SELECT by_walk FROM decided)
      AND ST_DWithin(n.location, ST_SetSRID(ST_MakePoint(:lng, :lat), 4326)::geography, (SELECT max(distance) + 0.001 FROM sphere_nearest))
    ORDER BY distance, n.id
    LIMIT :lim
),
by_filter AS MATERIALIZED (
    SELECT n.*, ST_Distance(n.location, ST_SetSRID(ST_MakePoint(:lng, :lat), 4326)::geography) AS distance
    FROM tenant_notes n
    WHERE n.tenant_id = :tenant
  AND (n.visibility = 'public' OR n.user_id = :viewer)
  AND n.body_folded LIKE '%coffee%'
  AND _ST_DWithin(n.location, ST_SetSRID(ST_MakePoint(:lng, :lat), 4326)::geography, :radius, true)
  AND search_cell_keys(n.tenant_id, n.location) && (SELECT ARRAY[]::bigint[] || search_cells(:tenant,
        :lng - degrees(asin(sin(:radius / 6356752.3 * 1.01) / cos(radians(:lat)))), :lat - degrees(:radius / 6356752.3 * 1.01),
        :lng + degrees(asin(sin(:radius / 6356752.3 * 1.01) / cos(radians(:lat)))), :lat + degrees(:radius / 6356752.3 * 1.01)))
      AND NOT (SELECT by_walk FROM decided)
    ORDER BY distance, n.id
    LIMIT :lim
)
SELECT n.id, n.body, ST_Y(n.location::geometry), ST_X(n.location::geometry), n.user_id, u.username,
       n.visibility, n.place_id, n.created_at, n.updated_at, n.distance
FROM (SELECT * FROM by_walk UNION ALL SELECT * FROM by_filter) n
JOIN tenant_users u ON u.tenant_id = n.tenant_id AND u.id = n.user_id
ORDER BY n.distance, n.id;
COMMIT;
