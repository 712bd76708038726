-- search-coffee-viewport: GET /v1/notes?q=coffee&in=body&bbox=<10 km box in London>&limit=50
-- The SQL of NoteList.newestStatement (walk, walk further, or every match); prepared, as the service runs it.
-- pgbench-protocol: prepared
\set lim 51
\set walk 1000
\set goes_on 5
\set further 15000
\set min_lng -0.1278 - 0.045 * 1.606648816 + random(-1000, 1000) / 111320.0
\set max_lng :min_lng + 0.09 * 1.606648816
\set min_lat 51.5074 - 0.045 + random(-1000, 1000) / 111320.0
\set max_lat :min_lat + 0.09
SELECT '%coffee%' AS p \gset
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
  AND n.body ILIKE :p
    ORDER BY n.created_at DESC, n.id DESC
    LIMIT :lim
),
edge AS MATERIALIZED (
    SELECT n.created_at, n.id FROM tenant_notes n
    WHERE n.tenant_id = :tenant
    ORDER BY n.created_at DESC, n.id DESC
    OFFSET :walk - 1 LIMIT 1
),
branch AS MATERIALIZED (
    SELECT CASE WHEN (SELECT count(*) FROM walked) = :lim OR NOT EXISTS (SELECT FROM edge) THEN 'walked'
                WHEN (SELECT count(*) FROM walked) >= :goes_on THEN 'further'
                ELSE 'matches' END AS name
),
further AS MATERIALIZED (
    SELECT n.* FROM (
        SELECT n.* FROM tenant_notes n
        WHERE n.tenant_id = :tenant AND (n.created_at, n.id) < ((SELECT created_at FROM edge), (SELECT id FROM edge))
          AND (SELECT name FROM branch) = 'further'
        ORDER BY n.created_at DESC, n.id DESC
        LIMIT :further
    ) n
    WHERE n.tenant_id = :tenant
  AND (n.visibility = 'public' OR n.user_id = :viewer)
  AND (((n.location::geometry && ST_MakeEnvelope(:min_lng, :min_lat, :max_lng, :max_lat, 4326)
 AND ST_X(n.location::geometry) BETWEEN :min_lng AND :max_lng)) AND ST_Y(n.location::geometry) BETWEEN :min_lat AND :max_lat)
  AND n.body ILIKE :p
    ORDER BY n.created_at DESC, n.id DESC
    LIMIT (SELECT :lim - count(*) FROM walked)
),
fallback AS MATERIALIZED (
    SELECT (SELECT name FROM branch) = 'matches'
           OR ((SELECT name FROM branch) = 'further'
               AND (SELECT count(*) FROM walked) + (SELECT count(*) FROM further) < :lim
               AND (SELECT count(*) FROM (SELECT FROM tenant_notes n
                                          WHERE n.tenant_id = :tenant AND (n.created_at, n.id) < ((SELECT created_at FROM edge), (SELECT id FROM edge))
                                          LIMIT :further) w) = :further) AS needed
),
matches AS MATERIALIZED (
    SELECT n.* FROM tenant_notes n
    WHERE n.tenant_id = :tenant
  AND (n.visibility = 'public' OR n.user_id = :viewer)
  AND (((n.location::geometry && ST_MakeEnvelope(:min_lng, :min_lat, :max_lng, :max_lat, 4326)
 AND ST_X(n.location::geometry) BETWEEN :min_lng AND :max_lng)) AND ST_Y(n.location::geometry) BETWEEN :min_lat AND :max_lat)
  AND n.body ILIKE :p
      AND (SELECT needed FROM fallback)
),
page AS (
    SELECT * FROM walked WHERE NOT (SELECT needed FROM fallback)
    UNION ALL
    SELECT * FROM further WHERE NOT (SELECT needed FROM fallback)
    UNION ALL
    (SELECT * FROM matches ORDER BY created_at DESC, id DESC LIMIT :lim)
)
SELECT n.id, n.body, ST_Y(n.location::geometry), ST_X(n.location::geometry), n.user_id, u.username,
       n.visibility, n.place_id, n.created_at, n.updated_at, (extract(epoch FROM n.created_at) * 1000000)::bigint
FROM page n
JOIN tenant_users u ON u.tenant_id = n.tenant_id AND u.id = n.user_id
ORDER BY n.created_at DESC, n.id DESC;
COMMIT;
