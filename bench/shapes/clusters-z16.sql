-- clusters-z16: GET /v1/notes/clusters?zoom=16&bbox=<a 1280x800 px screen over central London>
-- From the cluster grid (NoteStore+Grid.swift gridStatement, commit 3b18d0f; the service
-- computes the cell ranges in Swift, here grid_x/grid_y compute the same ones).
-- pgbench-protocol: prepared
\set zoom 16
\set grid 262144
\set min_lng -0.1278 - 0.013733 + random(-2000, 2000) / 111320.0
\set max_lng :min_lng + 0.027466
\set min_lat 51.5074 - 0.005342 + random(-2000, 2000) / 111320.0
\set max_lat :min_lat + 0.010684
BEGIN;
SELECT set_config('app.tenant_id', :tenant, true);
SELECT sum(sum_lat7)::float8 / sum(count) / 1e7, sum(sum_lng7)::float8 / sum(count) / 1e7, sum(count)::int8,
       CASE WHEN sum(count) = 1 THEN sum(sum_id)::int8 END
FROM (
    SELECT x, y, count, sum_id, sum_lat7, sum_lng7 FROM note_grid_cells
    WHERE tenant_id = :tenant AND zoom = :zoom
      AND y BETWEEN grid_y(:max_lat, :grid) AND grid_y(:min_lat, :grid)
      AND (x BETWEEN grid_x(:min_lng, :grid) AND grid_x(:max_lng, :grid))
    UNION ALL
    SELECT grid_x(lng, :grid), grid_y(lat, :grid), delta, delta * note_id,
           delta * round(lat * 1e7)::int8, delta * round(lng * 1e7)::int8
    FROM note_grid_deltas WHERE tenant_id = :tenant
    UNION ALL
    SELECT grid_x(ST_X(location::geometry), :grid), grid_y(ST_Y(location::geometry), :grid), 1, id,
           round(ST_Y(location::geometry) * 1e7)::int8, round(ST_X(location::geometry) * 1e7)::int8
    FROM notes WHERE tenant_id = :tenant AND user_id = :viewer AND visibility = 'private'
) cell
WHERE y BETWEEN grid_y(:max_lat, :grid) AND grid_y(:min_lat, :grid)
  AND (x BETWEEN grid_x(:min_lng, :grid) AND grid_x(:max_lng, :grid))
GROUP BY x, y
HAVING sum(count) > 0
ORDER BY sum(count) DESC, CASE WHEN sum(count) = 1 THEN sum(sum_id) END, x, y;
COMMIT;
