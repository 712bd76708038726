-- places-nearest: GET /v1/places?near=<London ±5 km>&radius_m=10000&limit=50
-- pgbench-protocol: prepared
\set lim 51
\set radius 10000
\set lat 51.5074 + random(-5000, 5000) / 111320.0
\set lng -0.1278 + random(-5000, 5000) / 111320.0 * 1.606648816
BEGIN;
SELECT set_config('app.tenant_id', :tenant, true);
WITH sphere_nearest AS (
    SELECT ST_Distance(p.location, ST_SetSRID(ST_MakePoint(:lng, :lat), 4326)::geography) AS distance
    FROM tenant_places p
    WHERE p.tenant_id = :tenant
  AND ST_DWithin(p.location, ST_SetSRID(ST_MakePoint(:lng, :lat), 4326)::geography, :radius)
    ORDER BY p.location <-> ST_SetSRID(ST_MakePoint(:lng, :lat), 4326)::geography
    LIMIT :lim
)
SELECT p.id, p.name, ST_Y(p.location::geometry), ST_X(p.location::geometry), p.kind, p.created_by,
       (SELECT count(*) FROM tenant_notes n
        WHERE n.tenant_id = p.tenant_id AND n.place_id = p.id AND (n.visibility = 'public' OR n.user_id = :viewer)),
       p.created_at, ST_Distance(p.location, ST_SetSRID(ST_MakePoint(:lng, :lat), 4326)::geography) AS distance
FROM tenant_places p
WHERE p.tenant_id = :tenant
  AND ST_DWithin(p.location, ST_SetSRID(ST_MakePoint(:lng, :lat), 4326)::geography, :radius)
  AND ST_DWithin(p.location, ST_SetSRID(ST_MakePoint(:lng, :lat), 4326)::geography, (SELECT max(distance) + 0.001 FROM sphere_nearest))
ORDER BY distance, p.id
LIMIT :lim;
COMMIT;
