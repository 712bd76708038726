-- Clusters for a viewer who hides authors (issue 34): a grid of each hidden author's notes.
--
-- The grid (0014, 0016) counts every public note; a viewer's clusters subtract what
-- `Audience` hides from them. Until now that meant reading every hidden note in the box:
-- for a user with 50 blocks of busy authors, 5 to 7 times the grid's read
-- (bench/results/2026-11-27-quick-blocks-r2-box.md). Now the authors anyone hides (blocked,
-- blocking, reported as a user, held for a moderator) are counted on a grid of their own,
-- per author, kept by the same deltas and folds as the tenant's, and a read subtracts their
-- cells in the box: a few rows per author, however many notes they wrote.
--
-- An author is added the first time anyone hides them and stays (unblocking is rare, and
-- the cells of a tracked author cost only their own writes' folding).

CREATE TABLE author_grid_authors (
    tenant_id bigint NOT NULL,
    user_id bigint NOT NULL,
    PRIMARY KEY (tenant_id, user_id)
);
SELECT admin.distribute_new_table('author_grid_authors');
ALTER TABLE author_grid_authors ADD FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE;

-- As note_grid_cells, per author.
CREATE TABLE author_grid_cells (
    tenant_id bigint NOT NULL,
    user_id bigint NOT NULL,
    zoom smallint NOT NULL CHECK (zoom BETWEEN 0 AND 17),
    x integer NOT NULL,
    y integer NOT NULL,
    count integer NOT NULL,
    sum_id bigint NOT NULL,
    sum_lat7 bigint NOT NULL,
    sum_lng7 bigint NOT NULL,
    PRIMARY KEY (tenant_id, user_id, zoom, y, x)
);
SELECT admin.distribute_new_table('author_grid_cells');
ALTER TABLE author_grid_cells ADD FOREIGN KEY (tenant_id, user_id) REFERENCES author_grid_authors (tenant_id, user_id) ON DELETE CASCADE;

ALTER TABLE author_grid_authors ENABLE ROW LEVEL SECURITY;
ALTER TABLE author_grid_cells ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON author_grid_authors USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
CREATE POLICY tenant_isolation ON author_grid_cells USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
GRANT SELECT ON author_grid_authors, author_grid_cells TO landmark_app;

-- Deltas name their note's author, so a fold can count them for a tracked author too. The
-- deltas waiting now get theirs from the notes; those of notes deleted since cannot, and
-- belong to no tracked author (none is tracked yet).
ALTER TABLE note_grid_deltas ADD COLUMN user_id bigint;
UPDATE note_grid_deltas d SET user_id = n.user_id FROM notes n WHERE n.tenant_id = d.tenant_id AND n.id = d.note_id;
ALTER TYPE grid_delta ADD ATTRIBUTE user_id bigint;

CREATE OR REPLACE FUNCTION append_grid_deltas(p_deltas grid_delta[]) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF cardinality(p_deltas) = 0 THEN RETURN; END IF;
    INSERT INTO note_grid_deltas (tenant_id, note_id, lat, lng, delta, user_id)
    SELECT d.tenant_id, d.note_id, d.lat, d.lng, d.delta, d.user_id FROM unnest(p_deltas) AS d;
END $$;

CREATE OR REPLACE FUNCTION notes_grid_inserted() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
BEGIN
    PERFORM append_grid_deltas(ARRAY(
        SELECT ROW(n.tenant_id, n.id, ST_Y(n.location::geometry), ST_X(n.location::geometry), 1, n.user_id)::grid_delta
        FROM new_rows n WHERE n.visibility = 'public' AND NOT n.author_disabled));
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION notes_grid_deleted() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
BEGIN
    PERFORM append_grid_deltas(ARRAY(
        SELECT ROW(o.tenant_id, o.id, ST_Y(o.location::geometry), ST_X(o.location::geometry), -1, o.user_id)::grid_delta
        FROM old_rows o WHERE o.visibility = 'public' AND NOT o.author_disabled));
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION notes_grid_updated() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
BEGIN
    PERFORM append_grid_deltas(ARRAY(
        SELECT ROW(o.tenant_id, o.id, ST_Y(o.location::geometry), ST_X(o.location::geometry), -1, o.user_id)::grid_delta
        FROM old_rows o JOIN new_rows n ON n.tenant_id = o.tenant_id AND n.id = o.id
        WHERE (o.visibility, o.location::geometry, o.author_disabled) IS DISTINCT FROM (n.visibility, n.location::geometry, n.author_disabled)
          AND o.visibility = 'public' AND NOT o.author_disabled
        UNION ALL
        SELECT ROW(n.tenant_id, n.id, ST_Y(n.location::geometry), ST_X(n.location::geometry), 1, n.user_id)::grid_delta
        FROM old_rows o JOIN new_rows n ON n.tenant_id = o.tenant_id AND n.id = o.id
        WHERE (o.visibility, o.location::geometry, o.author_disabled) IS DISTINCT FROM (n.visibility, n.location::geometry, n.author_disabled)
          AND n.visibility = 'public' AND NOT n.author_disabled));
    RETURN NULL;
END $$;

-- 0016's fold, which also folds the deltas of tracked authors into their cells.
CREATE OR REPLACE FUNCTION fold_note_grid(p_tenant bigint, p_batch integer) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
DECLARE moved integer; emptied_zoom smallint[]; emptied_x integer[]; emptied_y integer[];
        emptied_author bigint[]; emptied_author_zoom smallint[]; emptied_author_x integer[]; emptied_author_y integer[];
BEGIN
    IF NOT pg_try_advisory_xact_lock(hashtext('fold_note_grid'), p_tenant::integer # (p_tenant >> 32)::integer) THEN
        RETURN 0;
    END IF;
    WITH taken AS (
        DELETE FROM note_grid_deltas
        WHERE tenant_id = p_tenant
          AND id IN (SELECT id FROM note_grid_deltas WHERE tenant_id = p_tenant ORDER BY id LIMIT p_batch)
        RETURNING note_id, lat, lng, delta, user_id
    ), summed AS (
        SELECT z.zoom::smallint AS zoom, grid_x(t.lng, 4 << z.zoom) AS x, grid_y(t.lat, 4 << z.zoom) AS y,
               sum(t.delta)::integer AS count, sum(t.delta * t.note_id) AS sum_id,
               sum(t.delta * round(t.lat * 1e7)::int8) AS sum_lat7, sum(t.delta * round(t.lng * 1e7)::int8) AS sum_lng7
        FROM taken t CROSS JOIN generate_series(0, 17) AS z(zoom)
        GROUP BY 1, 2, 3
    ), upserted AS (
        INSERT INTO note_grid_cells AS c (tenant_id, zoom, x, y, count, sum_id, sum_lat7, sum_lng7)
        SELECT p_tenant, s.zoom, s.x, s.y, s.count, s.sum_id, s.sum_lat7, s.sum_lng7
        FROM summed s WHERE s.count <> 0 OR s.sum_id <> 0 OR s.sum_lat7 <> 0 OR s.sum_lng7 <> 0
        ON CONFLICT (tenant_id, zoom, x, y) DO UPDATE
            SET count = c.count + excluded.count, sum_id = c.sum_id + excluded.sum_id,
                sum_lat7 = c.sum_lat7 + excluded.sum_lat7, sum_lng7 = c.sum_lng7 + excluded.sum_lng7
        RETURNING c.zoom, c.x, c.y, c.count
    ), author_summed AS (
        SELECT t.user_id, z.zoom::smallint AS zoom, grid_x(t.lng, 4 << z.zoom) AS x, grid_y(t.lat, 4 << z.zoom) AS y,
               sum(t.delta)::integer AS count, sum(t.delta * t.note_id) AS sum_id,
               sum(t.delta * round(t.lat * 1e7)::int8) AS sum_lat7, sum(t.delta * round(t.lng * 1e7)::int8) AS sum_lng7
        FROM taken t
        JOIN author_grid_authors a ON a.tenant_id = p_tenant AND a.user_id = t.user_id
        CROSS JOIN generate_series(0, 17) AS z(zoom)
        GROUP BY 1, 2, 3, 4
    ), author_upserted AS (
        INSERT INTO author_grid_cells AS c (tenant_id, user_id, zoom, x, y, count, sum_id, sum_lat7, sum_lng7)
        SELECT p_tenant, s.user_id, s.zoom, s.x, s.y, s.count, s.sum_id, s.sum_lat7, s.sum_lng7
        FROM author_summed s WHERE s.count <> 0 OR s.sum_id <> 0 OR s.sum_lat7 <> 0 OR s.sum_lng7 <> 0
        ON CONFLICT (tenant_id, user_id, zoom, y, x) DO UPDATE
            SET count = c.count + excluded.count, sum_id = c.sum_id + excluded.sum_id,
                sum_lat7 = c.sum_lat7 + excluded.sum_lat7, sum_lng7 = c.sum_lng7 + excluded.sum_lng7
        RETURNING c.user_id, c.zoom, c.x, c.y, c.count
    ), author_emptied AS (
        SELECT array_agg(e.user_id) AS author, array_agg(e.zoom) AS zoom, array_agg(e.x) AS x, array_agg(e.y) AS y
        FROM author_upserted e WHERE e.count = 0
    )
    SELECT (SELECT count(*) FROM taken),
           array_agg(u.zoom) FILTER (WHERE u.count = 0), array_agg(u.x) FILTER (WHERE u.count = 0),
           array_agg(u.y) FILTER (WHERE u.count = 0),
           (SELECT author FROM author_emptied), (SELECT zoom FROM author_emptied),
           (SELECT x FROM author_emptied), (SELECT y FROM author_emptied)
    INTO moved, emptied_zoom, emptied_x, emptied_y, emptied_author, emptied_author_zoom, emptied_author_x, emptied_author_y
    FROM upserted u;
    IF emptied_zoom IS NOT NULL THEN
        DELETE FROM note_grid_cells c
        USING unnest(emptied_zoom, emptied_x, emptied_y) AS e(zoom, x, y)
        WHERE c.tenant_id = p_tenant AND c.zoom = e.zoom AND c.x = e.x AND c.y = e.y AND c.count = 0;
    END IF;
    IF emptied_author IS NOT NULL THEN
        DELETE FROM author_grid_cells c
        USING unnest(emptied_author, emptied_author_zoom, emptied_author_x, emptied_author_y) AS e(user_id, zoom, x, y)
        WHERE c.tenant_id = p_tenant AND c.user_id = e.user_id AND c.zoom = e.zoom AND c.x = e.x AND c.y = e.y AND c.count = 0;
    END IF;
    RETURN moved;
END $$;

-- Starts counting p_user on the author grid, once. The cells are what folded deltas made;
-- with the tenant's folds held off (their lock, waited for), an author's folded share is
-- their counted notes less their deltas not folded yet, in one snapshot. A delta committed
-- after it is folded later into both grids, the author being tracked by then.
CREATE FUNCTION track_author_on_grid(p_tenant bigint, p_user bigint) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
BEGIN
    IF EXISTS (SELECT FROM author_grid_authors WHERE tenant_id = p_tenant AND user_id = p_user) THEN RETURN; END IF;
    PERFORM pg_advisory_xact_lock(hashtext('fold_note_grid'), p_tenant::integer # (p_tenant >> 32)::integer);
    INSERT INTO author_grid_authors (tenant_id, user_id) VALUES (p_tenant, p_user) ON CONFLICT DO NOTHING;
    IF NOT FOUND THEN RETURN; END IF;  -- another transaction tracked them meanwhile
    INSERT INTO author_grid_cells (tenant_id, user_id, zoom, x, y, count, sum_id, sum_lat7, sum_lng7)
    SELECT p_tenant, p_user, z.zoom, grid_x(v.lng, 4 << z.zoom), grid_y(v.lat, 4 << z.zoom),
           sum(v.delta), sum(v.delta * v.id), sum(v.delta * round(v.lat * 1e7)::int8), sum(v.delta * round(v.lng * 1e7)::int8)
    FROM (
        SELECT n.id, ST_Y(n.location::geometry) AS lat, ST_X(n.location::geometry) AS lng, 1 AS delta
        FROM notes n
        WHERE n.tenant_id = p_tenant AND n.user_id = p_user AND n.visibility = 'public' AND NOT n.author_disabled
        UNION ALL
        SELECT d.note_id, d.lat, d.lng, -d.delta
        FROM note_grid_deltas d WHERE d.tenant_id = p_tenant AND d.user_id = p_user
    ) v
    CROSS JOIN generate_series(0, 17) AS z(zoom)
    GROUP BY 3, 4, 5
    HAVING sum(v.delta) <> 0;
END $$;

-- Whoever a block, a report of a user or a hold hides from someone is tracked.
CREATE FUNCTION blocks_track_authors() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
BEGIN
    PERFORM track_author_on_grid(NEW.tenant_id, NEW.blocker_id);
    PERFORM track_author_on_grid(NEW.tenant_id, NEW.blocked_id);
    RETURN NULL;
END $$;
CREATE TRIGGER blocks_track_authors AFTER INSERT ON blocks FOR EACH ROW EXECUTE FUNCTION blocks_track_authors();

CREATE FUNCTION reports_track_author() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
BEGIN
    PERFORM track_author_on_grid(NEW.tenant_id, NEW.target_id);
    RETURN NULL;
END $$;
CREATE TRIGGER reports_track_author AFTER INSERT ON reports FOR EACH ROW WHEN (NEW.target_type = 'user')
    EXECUTE FUNCTION reports_track_author();

CREATE FUNCTION users_track_held() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
BEGIN
    PERFORM track_author_on_grid(NEW.tenant_id, NEW.id);
    RETURN NULL;
END $$;
CREATE TRIGGER users_track_held AFTER UPDATE OF moderation ON users FOR EACH ROW WHEN (NEW.moderation IS NOT NULL)
    EXECUTE FUNCTION users_track_held();

-- Those hidden already, one by one (on Citus a statement joining these tables would be
-- planned across shards). A report may name a user deleted since.
DO $$
DECLARE v_tenant bigint; v_user bigint;
BEGIN
    FOR v_tenant, v_user IN
        SELECT tenant_id, blocker_id FROM blocks
        UNION SELECT tenant_id, blocked_id FROM blocks
        UNION SELECT tenant_id, target_id FROM reports WHERE target_type = 'user'
        UNION SELECT tenant_id, id FROM users WHERE moderation IS NOT NULL
    LOOP
        IF EXISTS (SELECT FROM users WHERE tenant_id = v_tenant AND id = v_user) THEN
            PERFORM track_author_on_grid(v_tenant, v_user);
        END IF;
    END LOOP;
END $$;

-- 0016's rebuild, which rebuilds the tracked authors' cells too.
CREATE OR REPLACE FUNCTION admin.rebuild_note_grid() RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE counted bigint;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('fold_note_grid'));
    LOCK TABLE note_grid_cells, note_grid_deltas, author_grid_cells IN EXCLUSIVE MODE;
    TRUNCATE note_grid_cells, note_grid_deltas, author_grid_cells;
    SET LOCAL work_mem = '512MB';  -- see 0015; SET LOCAL reaches Citus's workers, set_config does not
    INSERT INTO note_grid_cells (tenant_id, zoom, x, y, count, sum_id, sum_lat7, sum_lng7)
    SELECT v.tenant_id, z.zoom, grid_x(v.lng, 4 << z.zoom), grid_y(v.lat, 4 << z.zoom),
           count(*), sum(v.id), sum(round(v.lat * 1e7)::int8), sum(round(v.lng * 1e7)::int8)
    FROM (
        SELECT n.tenant_id, n.id, ST_Y(n.location::geometry) AS lat, ST_X(n.location::geometry) AS lng
        FROM notes n WHERE n.visibility = 'public' AND NOT n.author_disabled
    ) v
    CROSS JOIN generate_series(0, 17) AS z(zoom)
    GROUP BY 1, 2, 3, 4;
    INSERT INTO author_grid_cells (tenant_id, user_id, zoom, x, y, count, sum_id, sum_lat7, sum_lng7)
    SELECT v.tenant_id, v.user_id, z.zoom, grid_x(v.lng, 4 << z.zoom), grid_y(v.lat, 4 << z.zoom),
           count(*), sum(v.id), sum(round(v.lat * 1e7)::int8), sum(round(v.lng * 1e7)::int8)
    FROM (
        SELECT n.tenant_id, n.user_id, n.id, ST_Y(n.location::geometry) AS lat, ST_X(n.location::geometry) AS lng
        FROM notes n JOIN author_grid_authors a ON a.tenant_id = n.tenant_id AND a.user_id = n.user_id
        WHERE n.visibility = 'public' AND NOT n.author_disabled
    ) v
    CROSS JOIN generate_series(0, 17) AS z(zoom)
    GROUP BY 1, 2, 3, 4, 5;
    SELECT coalesce(sum(count), 0) INTO counted FROM note_grid_cells WHERE zoom = 0;
    RETURN counted;
END $$;
