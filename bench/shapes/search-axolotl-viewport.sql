-- search-axolotl-viewport: GET /v1/notes?q=axolotl&in=body&bbox=<10 km box in London>&limit=50
-- pgbench-protocol: extended
\set lim 51
\set radius 10000
\set min_lng -0.1278 - 0.045 * 1.606648816 + random(-1000, 1000) / 111320.0
\set max_lng :min_lng + 0.09 * 1.606648816
\set min_lat 51.5074 - 0.045 + random(-1000, 1000) / 111320.0
\set max_lat :min_lat + 0.09
BEGIN;
SELECT set_config('app.tenant_id', :tenant, true);
SELECT n.id, n.body, ST_Y(n.location::geometry), ST_X(n.location::geometry), n.user_id, u.username,
       n.visibility, n.place_id, n.created_at, n.updated_at, (extract(epoch FROM n.created_at) * 1000000)::bigint
FROM tenant_notes n
JOIN tenant_users u ON u.tenant_id = n.tenant_id AND u.id = n.user_id
WHERE n.tenant_id = :tenant
  AND (n.visibility = 'public' OR n.user_id = :viewer)
  AND (((n.location::geometry && ST_MakeEnvelope(:min_lng, :min_lat, :max_lng, :max_lat, 4326)
 AND ST_X(n.location::geometry) BETWEEN :min_lng AND :max_lng)) AND ST_Y(n.location::geometry) BETWEEN :min_lat AND :max_lat)
  AND n.body ILIKE '%axolotl%'
ORDER BY n.created_at DESC, n.id DESC
LIMIT :lim;
COMMIT;
