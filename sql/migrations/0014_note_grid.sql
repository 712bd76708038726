-- Clusters from a pre-aggregated grid (issue 22). GET /v1/notes/clusters grouped every
-- visible note of the box on each request; at low zoom that is most of a tenant.
--
-- The grid is the clusters' own: at zoom z the world is (4 << z) cells across, Web
-- Mercator rows, so a cell is a quarter of a map tile. For zooms 0 to 17 the public
-- notes of accounts that are not disabled are counted per tenant, zoom and cell, with
-- exact sums of their ids (a cell of one note names it) and of their positions in
-- 1e-7 degrees (a cluster sits at their mean). The caller's own private notes are few
-- and added to a read through an index; above zoom 17 a screen holds few enough notes
-- to group them live.
--
-- No hot rows: a write appends a delta (+1 or -1 for one note at one position) to
-- note_grid_deltas; fold_note_grid() moves deltas into the cells in batches, and a read
-- adds the deltas not folded yet, in the same snapshot, so it is exact at every moment.

CREATE FUNCTION grid_x(p_lng double precision, p_size integer) RETURNS integer
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT mod(floor((p_lng + 180) / 360 * p_size)::int8, p_size)::integer $$;

CREATE FUNCTION grid_y(p_lat double precision, p_size integer) RETURNS integer
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
    SELECT least(floor((1 - asinh(tan(radians(greatest(-85.0511287798066, least(85.0511287798066, p_lat))))) / pi())
                       / 2 * p_size)::int8, p_size - 1)::integer
$$;

CREATE TABLE note_grid_cells (
    tenant_id bigint NOT NULL REFERENCES tenants (id),
    zoom smallint NOT NULL CHECK (zoom BETWEEN 0 AND 17),
    x integer NOT NULL,
    y integer NOT NULL,
    -- No CHECK (count >= 0): PostgreSQL checks the row an upsert proposes before it finds
    -- the conflict, and a -1 for an existing cell is a proposal of -1. Folding in order
    -- keeps counts from going below zero; a read sums with HAVING > 0.
    count integer NOT NULL,
    sum_id bigint NOT NULL,
    sum_lat7 bigint NOT NULL,
    sum_lng7 bigint NOT NULL,
    PRIMARY KEY (tenant_id, zoom, x, y)
);

CREATE TABLE note_grid_deltas (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id bigint NOT NULL REFERENCES tenants (id),
    note_id bigint NOT NULL,
    lat double precision NOT NULL,
    lng double precision NOT NULL,
    delta smallint NOT NULL CHECK (delta IN (-1, 1))
);
CREATE INDEX note_grid_deltas_tenant ON note_grid_deltas (tenant_id);

ALTER TABLE note_grid_cells ENABLE ROW LEVEL SECURITY;
ALTER TABLE note_grid_deltas ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON note_grid_cells USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
CREATE POLICY tenant_isolation ON note_grid_deltas USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
GRANT SELECT ON note_grid_cells TO landmark_app;
GRANT SELECT, INSERT ON note_grid_deltas TO landmark_app;

-- What a row of notes counts for on the grid: public, by an account that is there and not
-- disabled. (Notes deleted with their account are taken off by the account's trigger
-- below, before they go: by then their author is gone, and whether it was disabled with it.)
CREATE FUNCTION note_counts_on_grid(p_tenant bigint, p_user bigint, p_visibility text) RETURNS boolean
LANGUAGE sql STABLE
AS $$
    SELECT p_visibility = 'public'
       AND EXISTS (SELECT 1 FROM users u WHERE u.tenant_id = p_tenant AND u.id = p_user AND u.disabled_at IS NULL)
$$;

CREATE FUNCTION notes_grid_inserted() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
BEGIN
    INSERT INTO note_grid_deltas (tenant_id, note_id, lat, lng, delta)
    SELECT n.tenant_id, n.id, ST_Y(n.location::geometry), ST_X(n.location::geometry), 1
    FROM new_rows n WHERE note_counts_on_grid(n.tenant_id, n.user_id, n.visibility);
    RETURN NULL;
END $$;

CREATE FUNCTION notes_grid_deleted() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
BEGIN
    INSERT INTO note_grid_deltas (tenant_id, note_id, lat, lng, delta)
    SELECT o.tenant_id, o.id, ST_Y(o.location::geometry), ST_X(o.location::geometry), -1
    FROM old_rows o WHERE note_counts_on_grid(o.tenant_id, o.user_id, o.visibility);
    RETURN NULL;
END $$;

-- A change of visibility or position: out where it was counted, in where it now counts.
-- (A note's account being disabled is the users trigger's; it does not change here.)
CREATE FUNCTION notes_grid_updated() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
BEGIN
    INSERT INTO note_grid_deltas (tenant_id, note_id, lat, lng, delta)
    SELECT o.tenant_id, o.id, ST_Y(o.location::geometry), ST_X(o.location::geometry), -1
    FROM old_rows o JOIN new_rows n ON n.tenant_id = o.tenant_id AND n.id = o.id
    WHERE (o.visibility, o.location::geometry) IS DISTINCT FROM (n.visibility, n.location::geometry)
      AND note_counts_on_grid(o.tenant_id, o.user_id, o.visibility)
    UNION ALL
    SELECT n.tenant_id, n.id, ST_Y(n.location::geometry), ST_X(n.location::geometry), 1
    FROM old_rows o JOIN new_rows n ON n.tenant_id = o.tenant_id AND n.id = o.id
    WHERE (o.visibility, o.location::geometry) IS DISTINCT FROM (n.visibility, n.location::geometry)
      AND note_counts_on_grid(n.tenant_id, n.user_id, n.visibility);
    RETURN NULL;
END $$;

CREATE TRIGGER notes_grid_inserted AFTER INSERT ON notes REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION notes_grid_inserted();
CREATE TRIGGER notes_grid_updated AFTER UPDATE ON notes REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION notes_grid_updated();
CREATE TRIGGER notes_grid_deleted AFTER DELETE ON notes REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION notes_grid_deleted();

-- An account disabled takes its public notes off the grid; enabled, puts them back.
CREATE FUNCTION users_grid_disabled() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
BEGIN
    INSERT INTO note_grid_deltas (tenant_id, note_id, lat, lng, delta)
    SELECT n.tenant_id, n.id, ST_Y(n.location::geometry), ST_X(n.location::geometry),
           CASE WHEN u.disabled_at IS NULL THEN 1 ELSE -1 END
    FROM old_rows o JOIN new_rows u ON u.tenant_id = o.tenant_id AND u.id = o.id
    JOIN notes n ON n.tenant_id = u.tenant_id AND n.user_id = u.id AND n.visibility = 'public'
    WHERE (o.disabled_at IS NULL) <> (u.disabled_at IS NULL);
    RETURN NULL;
END $$;
CREATE TRIGGER users_grid_disabled AFTER UPDATE ON users REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION users_grid_disabled();

-- An account deleted takes its notes with it (ON DELETE CASCADE): the counted ones leave
-- the grid here, while the account can still say whether they counted.
CREATE FUNCTION users_grid_deleted() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
BEGIN
    IF OLD.disabled_at IS NULL THEN
        INSERT INTO note_grid_deltas (tenant_id, note_id, lat, lng, delta)
        SELECT n.tenant_id, n.id, ST_Y(n.location::geometry), ST_X(n.location::geometry), -1
        FROM notes n WHERE n.tenant_id = OLD.tenant_id AND n.user_id = OLD.id AND n.visibility = 'public';
    END IF;
    RETURN OLD;
END $$;
CREATE TRIGGER users_grid_deleted BEFORE DELETE ON users FOR EACH ROW EXECUTE FUNCTION users_grid_deleted();

-- Moves up to p_batch of the oldest deltas into the cells of every zoom; the number
-- moved. Any replica may call it at any time (NoteGridFolder): one runs at once, the
-- others return 0, so deltas fold in the order they were written and no cell dips
-- below zero. A cell emptied is deleted.
CREATE FUNCTION fold_note_grid(p_batch integer DEFAULT 10000) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
DECLARE moved integer;
BEGIN
    IF NOT pg_try_advisory_xact_lock(hashtext('fold_note_grid')) THEN RETURN 0; END IF;
    IF to_regclass('pg_temp.folding_cells') IS NULL THEN
        CREATE TEMP TABLE folding_cells (tenant_id bigint, zoom smallint, x integer, y integer,
            count integer, sum_id bigint, sum_lat7 bigint, sum_lng7 bigint) ON COMMIT DELETE ROWS;
    END IF;
    -- Emptied at commit, and here too: one transaction may fold several batches (rebuild).
    TRUNCATE folding_cells;
    WITH taken AS (
        DELETE FROM note_grid_deltas WHERE id IN (SELECT id FROM note_grid_deltas ORDER BY id LIMIT p_batch)
        RETURNING tenant_id, note_id, lat, lng, delta
    ), summed AS (
        INSERT INTO folding_cells
        SELECT t.tenant_id, z.zoom, grid_x(t.lng, 4 << z.zoom), grid_y(t.lat, 4 << z.zoom),
               sum(t.delta), sum(t.delta * t.note_id), sum(t.delta * round(t.lat * 1e7)::int8),
               sum(t.delta * round(t.lng * 1e7)::int8)
        FROM taken t CROSS JOIN generate_series(0, 17) AS z(zoom)
        GROUP BY 1, 2, 3, 4
        RETURNING 1
    )
    SELECT count(*) INTO moved FROM taken;
    IF moved = 0 THEN RETURN 0; END IF;

    INSERT INTO note_grid_cells AS c (tenant_id, zoom, x, y, count, sum_id, sum_lat7, sum_lng7)
    SELECT * FROM folding_cells f
    WHERE f.count <> 0 OR f.sum_id <> 0 OR f.sum_lat7 <> 0 OR f.sum_lng7 <> 0
    ON CONFLICT (tenant_id, zoom, x, y) DO UPDATE
        SET count = c.count + excluded.count, sum_id = c.sum_id + excluded.sum_id,
            sum_lat7 = c.sum_lat7 + excluded.sum_lat7, sum_lng7 = c.sum_lng7 + excluded.sum_lng7;
    DELETE FROM note_grid_cells c USING folding_cells f
    WHERE c.tenant_id = f.tenant_id AND c.zoom = f.zoom AND c.x = f.x AND c.y = f.y AND c.count = 0;
    RETURN moved;
END $$;
REVOKE ALL ON FUNCTION fold_note_grid(integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fold_note_grid(integer) TO landmark_app;

-- Counts every tenant's grid again from the notes (after a bulk load with triggers off,
-- as the benchmark's): deltas for every counted note, then folded.
CREATE FUNCTION admin.rebuild_note_grid() RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE total bigint := 0; moved integer;
BEGIN
    LOCK TABLE note_grid_cells, note_grid_deltas IN EXCLUSIVE MODE;
    TRUNCATE note_grid_cells, note_grid_deltas;
    INSERT INTO note_grid_deltas (tenant_id, note_id, lat, lng, delta)
    SELECT n.tenant_id, n.id, ST_Y(n.location::geometry), ST_X(n.location::geometry), 1
    FROM notes n JOIN users u ON u.tenant_id = n.tenant_id AND u.id = n.user_id
    WHERE n.visibility = 'public' AND u.disabled_at IS NULL
    ORDER BY n.tenant_id, n.id;
    LOOP
        moved := public.fold_note_grid(100000);
        total := total + moved;
        EXIT WHEN moved = 0;
    END LOOP;
    RETURN total;
END $$;

-- The notes already there.
INSERT INTO note_grid_deltas (tenant_id, note_id, lat, lng, delta)
SELECT n.tenant_id, n.id, ST_Y(n.location::geometry), ST_X(n.location::geometry), 1
FROM notes n JOIN users u ON u.tenant_id = n.tenant_id AND u.id = n.user_id
WHERE n.visibility = 'public' AND u.disabled_at IS NULL
ORDER BY n.tenant_id, n.id;
