-- Clusters at zoom 10 over a city's bounding box: the folded grid's cells plus the viewer's
-- own private notes (the deltas are folded before the runs, so these are the service's
-- counts; its statement also adds the deltas not folded yet).
SELECT sum(sum_lat7)::float8 / sum(count) / 1e7, sum(sum_lng7)::float8 / sum(count) / 1e7, sum(count)::int8,
       CASE WHEN sum(count) = 1 THEN sum(sum_id)::int8 END
FROM (
    SELECT x, y, count, sum_id, sum_lat7, sum_lng7 FROM note_grid_cells
    WHERE tenant_id = :tenant AND zoom = 10
      AND x BETWEEN grid_x(:min_lng, 4096) AND grid_x(:max_lng, 4096)
      AND y BETWEEN grid_y(:max_lat, 4096) AND grid_y(:min_lat, 4096)
    UNION ALL
    SELECT grid_x(ST_X(location::geometry), 4096), grid_y(ST_Y(location::geometry), 4096), 1, id,
           round(ST_Y(location::geometry) * 1e7)::int8, round(ST_X(location::geometry) * 1e7)::int8
    FROM notes WHERE tenant_id = :tenant AND user_id = :viewer AND visibility = 'private'
) cell
WHERE x BETWEEN grid_x(:min_lng, 4096) AND grid_x(:max_lng, 4096)
  AND y BETWEEN grid_y(:max_lat, 4096) AND grid_y(:min_lat, 4096)
GROUP BY x, y
ORDER BY sum(count) DESC, CASE WHEN sum(count) = 1 THEN sum(sum_id) END, x, y;
