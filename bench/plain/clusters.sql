-- Clusters at zoom 10 over a city's bounding box, from the folded grid alone (the viewer
-- has no private notes and the deltas are folded before the runs, so these are the
-- service's counts; its statement also adds the unfolded deltas and private notes).
SELECT sum(sum_lat7)::float8 / sum(count) / 1e7, sum(sum_lng7)::float8 / sum(count) / 1e7, sum(count)::int8,
       CASE WHEN sum(count) = 1 THEN sum(sum_id)::int8 END
FROM note_grid_cells
WHERE tenant_id = :tenant AND zoom = 10
  AND x BETWEEN grid_x(:min_lng, 4096) AND grid_x(:max_lng, 4096)
  AND y BETWEEN grid_y(:max_lat, 4096) AND grid_y(:min_lat, 4096)
GROUP BY x, y
HAVING sum(count) > 0
ORDER BY sum(count) DESC, CASE WHEN sum(count) = 1 THEN sum(sum_id) END, x, y;
