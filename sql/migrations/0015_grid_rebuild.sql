-- admin.rebuild_note_grid(), again (0014's had two faults):
--
-- 1. It folded through fold_note_grid(), which only *tries* the folders' advisory lock.
--    A replica's folder that held it at that moment (waiting on the grid's tables, which
--    the rebuild had locked) made every fold return 0: the rebuild committed its deltas
--    unfolded, reported 0 notes, and the replicas then folded a million deltas while the
--    service served (the benchmark's load met exactly this). Now it waits for that lock
--    first, before it locks the tables, so a folder in flight finishes and later ones
--    find the lock taken and return at once.
-- 2. It counted through a delta per note, folded 100,000 at a time into ever larger
--    upserts. Now the cells are summed from the notes in one statement, as the fold
--    would sum them (the same integer sums), and the deltas written meanwhile are
--    dropped: the notes as they stand are what they stood for.
CREATE OR REPLACE FUNCTION admin.rebuild_note_grid() RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE counted bigint;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('fold_note_grid'));
    LOCK TABLE note_grid_cells, note_grid_deltas IN EXCLUSIVE MODE;
    TRUNCATE note_grid_cells, note_grid_deltas;
    -- A million notes make ~18 million (note, zoom) rows into ~1 million cells: room for
    -- the hash table, so the sum does not spill to disk.
    PERFORM set_config('work_mem', '512MB', true);
    INSERT INTO note_grid_cells (tenant_id, zoom, x, y, count, sum_id, sum_lat7, sum_lng7)
    SELECT v.tenant_id, z.zoom, grid_x(v.lng, 4 << z.zoom), grid_y(v.lat, 4 << z.zoom),
           count(*), sum(v.id), sum(round(v.lat * 1e7)::int8), sum(round(v.lng * 1e7)::int8)
    FROM (
        SELECT n.tenant_id, n.id, ST_Y(n.location::geometry) AS lat, ST_X(n.location::geometry) AS lng
        FROM notes n JOIN users u ON u.tenant_id = n.tenant_id AND u.id = n.user_id
        WHERE n.visibility = 'public' AND u.disabled_at IS NULL
    ) v
    CROSS JOIN generate_series(0, 17) AS z(zoom)
    GROUP BY 1, 2, 3, 4;
    SELECT coalesce(sum(count), 0) INTO counted FROM note_grid_cells WHERE zoom = 0;
    RETURN counted;
END $$;
