-- clusters-z20: GET /v1/notes/clusters?zoom=20&bbox=<a 1280x800 px screen over central London>
-- Above zoom 17 the grid keeps nothing: grouped live (NoteStore+Clusters.swift statement).
-- pgbench-protocol: prepared
\set grid 4194304
\set mlimit 85.0511287798066
\set nmlimit -85.0511287798066
\set min_lng -0.1278 - 0.000858 + random(-2000, 2000) / 111320.0
\set max_lng :min_lng + 0.001717
\set min_lat 51.5074 - 0.000334 + random(-2000, 2000) / 111320.0
\set max_lat :min_lat + 0.000668
BEGIN;
SELECT set_config('app.tenant_id', :tenant, true);
SELECT avg(lat), avg(lng), count(*)::int8, CASE WHEN count(*) = 1 THEN min(id) END
FROM (
    SELECT n.id, ST_Y(n.location::geometry) AS lat, ST_X(n.location::geometry) AS lng
    FROM tenant_notes n
    WHERE n.tenant_id = :tenant
  AND (n.visibility = 'public' OR n.user_id = :viewer)
  AND (((n.location::geometry && ST_MakeEnvelope(:min_lng, :min_lat, :max_lng, :max_lat, 4326)
 AND ST_X(n.location::geometry) BETWEEN :min_lng AND :max_lng)) AND ST_Y(n.location::geometry) BETWEEN :min_lat AND :max_lat)
) visible
GROUP BY
    mod(floor((lng + 180) / 360 * :grid)::int8, :grid),
    least(floor((1 - asinh(tan(radians(greatest(:nmlimit, least(:mlimit, lat))))) / pi())
                / 2 * :grid)::int8, :grid - 1)
ORDER BY count(*) DESC, min(id);
COMMIT;
