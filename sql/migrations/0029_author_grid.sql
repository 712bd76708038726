-- Clusters for a viewer who hides authors (issue 34): what they do not see, pre-aggregated.
--
-- The grid (0014, 0016) counts every public note; a viewer's clusters subtract what
-- `Audience` hides from them. Until now that meant reading every hidden note in the box:
-- for a user with 50 blocks of busy authors, 5 to 7 times the grid's read
-- (bench/results/2026-11-27-quick-blocks-r2-box.md). Subtracting a grid per hidden author
-- instead still read 50 authors' cells (249 rows against the box's 6: 0.72 to 0.84 of the
-- rate without blocks, -r3-author-grid.md). So, on the same deltas and folds as the tenant's:
--
-- * hidden_authors: per viewer, the authors they do not see for a reason of their own (a
--   block either way, a report of the user), each once however many reasons;
-- * viewer_hidden_cells: per viewer, the cells of those authors' counted notes, summed: a
--   read subtracts the viewer's cells in the box, as few as the box's own;
-- * author_grid_cells: per author, for every author anyone hides (and those held for a
--   moderator, hidden from everyone): what a viewer's cells gain or lose when a reason
--   comes or goes, and what a read subtracts for held accounts.
--
-- The three tables keep their pages when emptied (`vacuum_truncate = false`): a vacuum that
-- truncated an emptied table to nothing made PostgreSQL plan a scan of the whole table (an empty
-- one costs nothing), and that cached plan read every viewer's cells once they came back
-- (11.5 ms of PostgreSQL CPU a clusters read, bench/results/2026-11-27-full-blocks.md).
--
-- An author stays on the author grid once there (unblocking is rare, and a tracked author
-- costs only their own writes' folding). A fold adds an author's deltas to each viewer who
-- hides them: an author hidden by a thousand viewers costs 18,000 cell updates a note.

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
) WITH (vacuum_truncate = false);
SELECT admin.distribute_new_table('author_grid_cells');
ALTER TABLE author_grid_cells ADD FOREIGN KEY (tenant_id, user_id) REFERENCES author_grid_authors (tenant_id, user_id) ON DELETE CASCADE;

ALTER TABLE author_grid_authors ENABLE ROW LEVEL SECURITY;
ALTER TABLE author_grid_cells ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON author_grid_authors USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
CREATE POLICY tenant_isolation ON author_grid_cells USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
GRANT SELECT ON author_grid_authors, author_grid_cells TO landmark_app;

CREATE TABLE hidden_authors (
    tenant_id bigint NOT NULL,
    viewer_id bigint NOT NULL,
    author_id bigint NOT NULL,
    -- Blocks either way and reports of the user: hidden while any stands.
    reasons integer NOT NULL CHECK (reasons > 0),
    PRIMARY KEY (tenant_id, viewer_id, author_id)
) WITH (vacuum_truncate = false);
SELECT admin.distribute_new_table('hidden_authors');
ALTER TABLE hidden_authors ADD FOREIGN KEY (tenant_id, viewer_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE;
ALTER TABLE hidden_authors ADD FOREIGN KEY (tenant_id, author_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE;
-- Whom a fold adds an author's deltas to.
CREATE INDEX hidden_authors_by_author ON hidden_authors (tenant_id, author_id, viewer_id);

-- As note_grid_cells, per viewer: the sum of their hidden authors' cells.
CREATE TABLE viewer_hidden_cells (
    tenant_id bigint NOT NULL,
    viewer_id bigint NOT NULL,
    zoom smallint NOT NULL CHECK (zoom BETWEEN 0 AND 17),
    x integer NOT NULL,
    y integer NOT NULL,
    count integer NOT NULL,
    sum_id bigint NOT NULL,
    sum_lat7 bigint NOT NULL,
    sum_lng7 bigint NOT NULL,
    PRIMARY KEY (tenant_id, viewer_id, zoom, y, x)
) WITH (vacuum_truncate = false);
SELECT admin.distribute_new_table('viewer_hidden_cells');
ALTER TABLE viewer_hidden_cells ADD FOREIGN KEY (tenant_id, viewer_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE;

ALTER TABLE hidden_authors ENABLE ROW LEVEL SECURITY;
ALTER TABLE viewer_hidden_cells ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON hidden_authors USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
CREATE POLICY tenant_isolation ON viewer_hidden_cells USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
GRANT SELECT ON hidden_authors, viewer_hidden_cells TO landmark_app;

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

-- 0016's fold, which also folds the deltas into the author grid (for tracked authors) and
-- into the cells of each viewer who hides their author. The batch is taken once, then summed
-- into each grid in a statement of its own; a cell emptied is deleted.
CREATE OR REPLACE FUNCTION fold_note_grid(p_tenant bigint, p_batch integer) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
DECLARE taken grid_delta[]; emptied_user bigint[]; emptied_zoom smallint[]; emptied_x integer[]; emptied_y integer[];
BEGIN
    IF NOT pg_try_advisory_xact_lock(hashtext('fold_note_grid'), p_tenant::integer # (p_tenant >> 32)::integer) THEN
        RETURN 0;
    END IF;
    WITH deleted AS (
        DELETE FROM note_grid_deltas
        WHERE tenant_id = p_tenant
          AND id IN (SELECT id FROM note_grid_deltas WHERE tenant_id = p_tenant ORDER BY id LIMIT p_batch)
        RETURNING tenant_id, note_id, lat, lng, delta, user_id
    )
    SELECT coalesce(array_agg(ROW(d.tenant_id, d.note_id, d.lat, d.lng, d.delta, d.user_id)::grid_delta), '{}') INTO taken
    FROM deleted d;
    IF cardinality(taken) = 0 THEN RETURN 0; END IF;

    -- The tenant's grid.
    WITH summed AS (
        SELECT z.zoom::smallint AS zoom, grid_x(t.lng, 4 << z.zoom) AS x, grid_y(t.lat, 4 << z.zoom) AS y,
               sum(t.delta)::integer AS count, sum(t.delta * t.note_id) AS sum_id,
               sum(t.delta * round(t.lat * 1e7)::int8) AS sum_lat7, sum(t.delta * round(t.lng * 1e7)::int8) AS sum_lng7
        FROM unnest(taken) t CROSS JOIN generate_series(0, 17) AS z(zoom)
        GROUP BY 1, 2, 3
    ), upserted AS (
        INSERT INTO note_grid_cells AS c (tenant_id, zoom, x, y, count, sum_id, sum_lat7, sum_lng7)
        SELECT p_tenant, s.zoom, s.x, s.y, s.count, s.sum_id, s.sum_lat7, s.sum_lng7
        FROM summed s WHERE s.count <> 0 OR s.sum_id <> 0 OR s.sum_lat7 <> 0 OR s.sum_lng7 <> 0
        ON CONFLICT (tenant_id, zoom, x, y) DO UPDATE
            SET count = c.count + excluded.count, sum_id = c.sum_id + excluded.sum_id,
                sum_lat7 = c.sum_lat7 + excluded.sum_lat7, sum_lng7 = c.sum_lng7 + excluded.sum_lng7
        RETURNING c.zoom, c.x, c.y, c.count
    )
    SELECT array_agg(u.zoom), array_agg(u.x), array_agg(u.y) INTO emptied_zoom, emptied_x, emptied_y
    FROM upserted u WHERE u.count = 0;
    IF emptied_zoom IS NOT NULL THEN
        DELETE FROM note_grid_cells c
        USING unnest(emptied_zoom, emptied_x, emptied_y) AS e(zoom, x, y)
        WHERE c.tenant_id = p_tenant AND c.zoom = e.zoom AND c.x = e.x AND c.y = e.y AND c.count = 0;
    END IF;

    -- The tracked authors' grid.
    WITH summed AS (
        SELECT t.user_id, z.zoom::smallint AS zoom, grid_x(t.lng, 4 << z.zoom) AS x, grid_y(t.lat, 4 << z.zoom) AS y,
               sum(t.delta)::integer AS count, sum(t.delta * t.note_id) AS sum_id,
               sum(t.delta * round(t.lat * 1e7)::int8) AS sum_lat7, sum(t.delta * round(t.lng * 1e7)::int8) AS sum_lng7
        FROM unnest(taken) t
        JOIN author_grid_authors a ON a.tenant_id = p_tenant AND a.user_id = t.user_id
        CROSS JOIN generate_series(0, 17) AS z(zoom)
        GROUP BY 1, 2, 3, 4
    ), upserted AS (
        INSERT INTO author_grid_cells AS c (tenant_id, user_id, zoom, x, y, count, sum_id, sum_lat7, sum_lng7)
        SELECT p_tenant, s.user_id, s.zoom, s.x, s.y, s.count, s.sum_id, s.sum_lat7, s.sum_lng7
        FROM summed s WHERE s.count <> 0 OR s.sum_id <> 0 OR s.sum_lat7 <> 0 OR s.sum_lng7 <> 0
        ON CONFLICT (tenant_id, user_id, zoom, y, x) DO UPDATE
            SET count = c.count + excluded.count, sum_id = c.sum_id + excluded.sum_id,
                sum_lat7 = c.sum_lat7 + excluded.sum_lat7, sum_lng7 = c.sum_lng7 + excluded.sum_lng7
        RETURNING c.user_id, c.zoom, c.x, c.y, c.count
    )
    SELECT array_agg(u.user_id), array_agg(u.zoom), array_agg(u.x), array_agg(u.y)
    INTO emptied_user, emptied_zoom, emptied_x, emptied_y
    FROM upserted u WHERE u.count = 0;
    IF emptied_user IS NOT NULL THEN
        DELETE FROM author_grid_cells c
        USING unnest(emptied_user, emptied_zoom, emptied_x, emptied_y) AS e(user_id, zoom, x, y)
        WHERE c.tenant_id = p_tenant AND c.user_id = e.user_id AND c.zoom = e.zoom AND c.x = e.x AND c.y = e.y AND c.count = 0;
    END IF;

    -- Each viewer's hidden cells, for the authors they hide.
    WITH summed AS (
        SELECT h.viewer_id, z.zoom::smallint AS zoom, grid_x(t.lng, 4 << z.zoom) AS x, grid_y(t.lat, 4 << z.zoom) AS y,
               sum(t.delta)::integer AS count, sum(t.delta * t.note_id) AS sum_id,
               sum(t.delta * round(t.lat * 1e7)::int8) AS sum_lat7, sum(t.delta * round(t.lng * 1e7)::int8) AS sum_lng7
        FROM unnest(taken) t
        JOIN hidden_authors h ON h.tenant_id = p_tenant AND h.author_id = t.user_id
        CROSS JOIN generate_series(0, 17) AS z(zoom)
        GROUP BY 1, 2, 3, 4
    ), upserted AS (
        INSERT INTO viewer_hidden_cells AS c (tenant_id, viewer_id, zoom, x, y, count, sum_id, sum_lat7, sum_lng7)
        SELECT p_tenant, s.viewer_id, s.zoom, s.x, s.y, s.count, s.sum_id, s.sum_lat7, s.sum_lng7
        FROM summed s WHERE s.count <> 0 OR s.sum_id <> 0 OR s.sum_lat7 <> 0 OR s.sum_lng7 <> 0
        ON CONFLICT (tenant_id, viewer_id, zoom, y, x) DO UPDATE
            SET count = c.count + excluded.count, sum_id = c.sum_id + excluded.sum_id,
                sum_lat7 = c.sum_lat7 + excluded.sum_lat7, sum_lng7 = c.sum_lng7 + excluded.sum_lng7
        RETURNING c.viewer_id, c.zoom, c.x, c.y, c.count
    )
    SELECT array_agg(u.viewer_id), array_agg(u.zoom), array_agg(u.x), array_agg(u.y)
    INTO emptied_user, emptied_zoom, emptied_x, emptied_y
    FROM upserted u WHERE u.count = 0;
    IF emptied_user IS NOT NULL THEN
        DELETE FROM viewer_hidden_cells c
        USING unnest(emptied_user, emptied_zoom, emptied_x, emptied_y) AS e(viewer_id, zoom, x, y)
        WHERE c.tenant_id = p_tenant AND c.viewer_id = e.viewer_id AND c.zoom = e.zoom AND c.x = e.x AND c.y = e.y
          AND c.count = 0;
    END IF;
    RETURN cardinality(taken);
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

-- One reason more (p_change 1) or fewer (-1) for p_viewer not to see p_author; any number
-- below that of reasons left (NULL) removes them all. When the first comes or the last goes,
-- the author's folded cells (their author grid's, tracked first) are added to or taken from
-- the viewer's, with the tenant's folds held off: a fold would otherwise move deltas
-- between the two meanwhile. Taking away only updates cells the viewer has (their account
-- may be going: its cells are then gone or going, not to be made again).
CREATE FUNCTION change_hidden_author(p_tenant bigint, p_viewer bigint, p_author bigint, p_change integer) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
DECLARE before integer; after integer;
BEGIN
    IF p_change IS NULL OR p_change < 0 THEN
        IF NOT EXISTS (SELECT FROM hidden_authors WHERE tenant_id = p_tenant AND viewer_id = p_viewer AND author_id = p_author) THEN
            RETURN;
        END IF;
    ELSE
        PERFORM track_author_on_grid(p_tenant, p_author);
    END IF;
    PERFORM pg_advisory_xact_lock(hashtext('fold_note_grid'), p_tenant::integer # (p_tenant >> 32)::integer);
    SELECT h.reasons INTO before FROM hidden_authors h
    WHERE h.tenant_id = p_tenant AND h.viewer_id = p_viewer AND h.author_id = p_author;
    before := coalesce(before, 0);
    after := CASE WHEN p_change IS NULL THEN 0 ELSE greatest(before + p_change, 0) END;
    IF after = 0 THEN
        DELETE FROM hidden_authors WHERE tenant_id = p_tenant AND viewer_id = p_viewer AND author_id = p_author;
    ELSIF before = 0 THEN
        INSERT INTO hidden_authors (tenant_id, viewer_id, author_id, reasons) VALUES (p_tenant, p_viewer, p_author, after);
    ELSE
        UPDATE hidden_authors SET reasons = after WHERE tenant_id = p_tenant AND viewer_id = p_viewer AND author_id = p_author;
    END IF;
    IF before = 0 AND after > 0 THEN
        INSERT INTO viewer_hidden_cells AS c (tenant_id, viewer_id, zoom, x, y, count, sum_id, sum_lat7, sum_lng7)
        SELECT p_tenant, p_viewer, a.zoom, a.x, a.y, a.count, a.sum_id, a.sum_lat7, a.sum_lng7
        FROM author_grid_cells a WHERE a.tenant_id = p_tenant AND a.user_id = p_author
        ON CONFLICT (tenant_id, viewer_id, zoom, y, x) DO UPDATE
            SET count = c.count + excluded.count, sum_id = c.sum_id + excluded.sum_id,
                sum_lat7 = c.sum_lat7 + excluded.sum_lat7, sum_lng7 = c.sum_lng7 + excluded.sum_lng7;
    ELSIF before > 0 AND after = 0 THEN
        UPDATE viewer_hidden_cells c
        SET count = c.count - a.count, sum_id = c.sum_id - a.sum_id, sum_lat7 = c.sum_lat7 - a.sum_lat7, sum_lng7 = c.sum_lng7 - a.sum_lng7
        FROM author_grid_cells a
        WHERE a.tenant_id = p_tenant AND a.user_id = p_author
          AND c.tenant_id = p_tenant AND c.viewer_id = p_viewer AND c.zoom = a.zoom AND c.y = a.y AND c.x = a.x;
        DELETE FROM viewer_hidden_cells c
        USING author_grid_cells a
        WHERE a.tenant_id = p_tenant AND a.user_id = p_author
          AND c.tenant_id = p_tenant AND c.viewer_id = p_viewer AND c.zoom = a.zoom AND c.y = a.y AND c.x = a.x AND c.count = 0;
    END IF;
END $$;

-- A block hides each from the other; a report of a user hides them from the reporter for
-- good; a hold hides an account from everyone (read from the author grid).
CREATE FUNCTION blocks_hide_authors() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
DECLARE change integer := CASE TG_OP WHEN 'INSERT' THEN 1 ELSE -1 END;
        b blocks := CASE TG_OP WHEN 'INSERT' THEN NEW ELSE OLD END;
BEGIN
    PERFORM change_hidden_author(b.tenant_id, b.blocker_id, b.blocked_id, change);
    PERFORM change_hidden_author(b.tenant_id, b.blocked_id, b.blocker_id, change);
    RETURN NULL;
END $$;
CREATE TRIGGER blocks_hide_authors AFTER INSERT OR DELETE ON blocks FOR EACH ROW EXECUTE FUNCTION blocks_hide_authors();

CREATE FUNCTION reports_hide_author() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
BEGIN
    PERFORM change_hidden_author(NEW.tenant_id, NEW.reporter_id, NEW.target_id, 1);
    RETURN NULL;
END $$;
CREATE TRIGGER reports_hide_author AFTER INSERT ON reports FOR EACH ROW WHEN (NEW.target_type = 'user')
    EXECUTE FUNCTION reports_hide_author();

CREATE FUNCTION users_track_held() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
BEGIN
    PERFORM track_author_on_grid(NEW.tenant_id, NEW.id);
    RETURN NULL;
END $$;
CREATE TRIGGER users_track_held AFTER UPDATE OF moderation ON users FOR EACH ROW WHEN (NEW.moderation IS NOT NULL)
    EXECUTE FUNCTION users_track_held();

-- An account deleted: its notes leave the grid through their deltas, which reach no viewer
-- once the account is in no one's hidden_authors; so first take its folded cells from each
-- viewer who hides it. (Its own hidden cells go with it.)
CREATE FUNCTION users_unhide_deleted() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
DECLARE v_viewer bigint;
BEGIN
    FOR v_viewer IN SELECT viewer_id FROM hidden_authors WHERE tenant_id = OLD.tenant_id AND author_id = OLD.id LOOP
        PERFORM change_hidden_author(OLD.tenant_id, v_viewer, OLD.id, NULL);
    END LOOP;
    RETURN OLD;
END $$;
CREATE TRIGGER users_unhide_deleted BEFORE DELETE ON users FOR EACH ROW EXECUTE FUNCTION users_unhide_deleted();

-- Those hidden already, one by one (on Citus a statement joining these tables would be
-- planned across shards). A report may name a user deleted since.
DO $$
DECLARE v_tenant bigint; v_viewer bigint; v_author bigint;
BEGIN
    FOR v_tenant, v_viewer, v_author IN
        SELECT tenant_id, blocker_id, blocked_id FROM blocks
        UNION ALL SELECT tenant_id, blocked_id, blocker_id FROM blocks
        UNION ALL SELECT tenant_id, reporter_id, target_id FROM reports WHERE target_type = 'user' AND reporter_id IS NOT NULL
    LOOP
        IF EXISTS (SELECT FROM users WHERE tenant_id = v_tenant AND id = v_author) THEN
            PERFORM change_hidden_author(v_tenant, v_viewer, v_author, 1);
        END IF;
    END LOOP;
    FOR v_tenant, v_author IN SELECT tenant_id, id FROM users WHERE moderation IS NOT NULL LOOP
        PERFORM track_author_on_grid(v_tenant, v_author);
    END LOOP;
END $$;

-- 0016's rebuild, which rebuilds the tracked authors' cells and the viewers' too.
CREATE OR REPLACE FUNCTION admin.rebuild_note_grid() RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE counted bigint;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('fold_note_grid'));
    LOCK TABLE note_grid_cells, note_grid_deltas, author_grid_cells, viewer_hidden_cells IN EXCLUSIVE MODE;
    TRUNCATE note_grid_cells, note_grid_deltas, author_grid_cells, viewer_hidden_cells;
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
    INSERT INTO viewer_hidden_cells (tenant_id, viewer_id, zoom, x, y, count, sum_id, sum_lat7, sum_lng7)
    SELECT h.tenant_id, h.viewer_id, a.zoom, a.x, a.y, sum(a.count), sum(a.sum_id), sum(a.sum_lat7), sum(a.sum_lng7)
    FROM hidden_authors h JOIN author_grid_cells a ON a.tenant_id = h.tenant_id AND a.user_id = h.author_id
    GROUP BY 1, 2, 3, 4, 5;
    SELECT coalesce(sum(count), 0) INTO counted FROM note_grid_cells WHERE zoom = 0;
    RETURN counted;
END $$;
