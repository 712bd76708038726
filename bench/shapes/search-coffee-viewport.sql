-- search-coffee-viewport: GET /v1/notes?q=coffee&in=body&bbox=<10 km box in London>&limit=50 (bounded newest walk, else the index)
-- pgbench-protocol: extended
\set lim 51
\set radius 10000
\set walk 2000
\set nwalk 500
\set min_lng -0.1278 - 0.045 * 1.606648816 + random(-1000, 1000) / 111320.0
\set max_lng :min_lng + 0.09 * 1.606648816
\set min_lat 51.5074 - 0.045 + random(-1000, 1000) / 111320.0
\set max_lat :min_lat + 0.09
BEGIN;
SELECT set_config('app.tenant_id', :tenant, true);
WITH walked AS MATERIALIZED (
    SELECT n.* FROM (
        SELECT n.* FROM tenant_notes n
        WHERE n.tenant_id = :tenant
        ORDER BY n.created_at DESC, n.id DESC
        LIMIT :walk
    ) n
    WHERE n.tenant_id = :tenant
  AND (n.visibility = 'public' OR n.user_id = :viewer)
  AND (((n.location::geometry && ST_MakeEnvelope(:min_lng, :min_lat, :max_lng, :max_lat, 4326)
 AND ST_X(n.location::geometry) BETWEEN :min_lng AND :max_lng)) AND ST_Y(n.location::geometry) BETWEEN :min_lat AND :max_lat)
  AND n.body ILIKE '%coffee%'
    ORDER BY n.created_at DESC, n.id DESC
    LIMIT :lim
),
matches AS MATERIALIZED (
    SELECT n.* FROM tenant_notes n
    WHERE n.tenant_id = :tenant
  AND (n.visibility = 'public' OR n.user_id = :viewer)
  AND (((n.location::geometry && ST_MakeEnvelope(:min_lng, :min_lat, :max_lng, :max_lat, 4326)
 AND ST_X(n.location::geometry) BETWEEN :min_lng AND :max_lng)) AND ST_Y(n.location::geometry) BETWEEN :min_lat AND :max_lat)
  AND n.body ILIKE '%coffee%'
      AND (SELECT count(*) FROM walked) < :lim AND NOT (SELECT count(*) FROM (SELECT FROM tenant_notes n
                       WHERE n.tenant_id = :tenant
                       LIMIT :walk) w) < :walk
),
page AS (
    SELECT * FROM walked
    WHERE (SELECT count(*) FROM walked) = :lim OR (SELECT count(*) FROM (SELECT FROM tenant_notes n
                       WHERE n.tenant_id = :tenant
                       LIMIT :walk) w) < :walk
    UNION ALL
    (SELECT * FROM matches ORDER BY created_at DESC, id DESC LIMIT :lim)
)
SELECT n.id, n.body, ST_Y(n.location::geometry), ST_X(n.location::geometry), n.user_id, u.username,
       n.visibility, n.place_id, n.created_at, n.updated_at, (extract(epoch FROM n.created_at) * 1000000)::bigint
FROM page n
JOIN tenant_users u ON u.tenant_id = n.tenant_id AND u.id = n.user_id
ORDER BY n.created_at DESC, n.id DESC;
COMMIT;
