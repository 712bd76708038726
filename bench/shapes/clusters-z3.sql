-- clusters-z3: GET /v1/notes/clusters?zoom=3&bbox=<-25,34,45,72: Europe, ~75% of the notes>
-- From the cluster grid (NoteStore+Grid.swift gridStatement, commit 3b18d0f; the service
-- computes the cell ranges in Swift, here grid_x/grid_y compute the same ones).
-- pgbench-protocol: prepared
\set zoom 3
\set grid 32
\set min_lng -25
\set max_lng 45
\set min_lat 34
\set max_lat 72
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
