-- A schema Citus can distribute by tenant_id (issue 23), the same on one server.
--
-- On Citus every tenant table is split into shards by tenant_id, and a statement is sent
-- to one shard only when everything it reads names the tenant. Triggers run on the shard,
-- on its worker, and may only write rows of the same tenant (which live in the same shard
-- group there). What stood in the way, and what replaces it:
--
-- 1. tenant_notes hid a disabled author's notes with a sub-select on users: a second
--    distributed table read per statement, which no worker can plan on its own. The note
--    now carries the flag (author_disabled), kept by a trigger on users.
-- 2. The grid's triggers asked users per note whether its author was disabled; they now
--    read the same flag. The trigger that took a deleted account's notes off the grid goes:
--    the cascaded deletes carry the flag themselves.
-- 3. Foreign keys with ON DELETE SET NULL (column): Citus refuses them when the key
--    includes the distribution column. Triggers set the column to NULL instead.
-- 4. Unique keys without tenant_id: the token and stream-ticket hashes, the event log's
--    (id + 0) index and the grid deltas' primary key.
-- 5. fold_note_grid() folded every tenant's deltas at once through a temporary table; a
--    fold now takes one tenant's, in statements that name it, so Citus can run it on the
--    tenant's worker.
-- 6. Operators' functions that Citus cannot send to the workers as written: now() inside
--    CASE (Citus evaluates such functions on the coordinator and will not guess inside a
--    CASE), joins from a reference table into distributed ones, correlated counts.
-- 7. admin.distribute() distributes it all where the citus extension is present (a no-op
--    elsewhere), and distribution_problems() says what is not as expected (/readyz).

-- 1. The author's state on the note -----------------------------------------------------
ALTER TABLE notes ADD COLUMN author_disabled boolean NOT NULL DEFAULT false;
ALTER TABLE notes DISABLE TRIGGER USER;  -- a back-fill, not a change anyone should hear of
UPDATE notes n SET author_disabled = true
FROM users u WHERE u.tenant_id = n.tenant_id AND u.id = n.user_id AND u.disabled_at IS NOT NULL;
ALTER TABLE notes ENABLE TRIGGER USER;

CREATE OR REPLACE VIEW tenant_notes AS
SELECT * FROM notes WHERE tenant_id = current_tenant_id() AND NOT author_disabled;
DROP INDEX users_disabled;

-- A user disabled or enabled: their notes follow (and so the grid, through the notes'
-- trigger). Row by row with the tenant named, so on Citus it stays on the shard group.
CREATE FUNCTION users_disabled_notes() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
BEGIN
    IF (OLD.disabled_at IS NULL) <> (NEW.disabled_at IS NULL) THEN
        UPDATE notes SET author_disabled = NEW.disabled_at IS NOT NULL
        WHERE tenant_id = NEW.tenant_id AND user_id = NEW.id;
    END IF;
    RETURN NULL;
END $$;
DROP TRIGGER users_grid_disabled ON users;
DROP FUNCTION users_grid_disabled();
DROP TRIGGER users_grid_deleted ON users;
DROP FUNCTION users_grid_deleted();
CREATE TRIGGER users_disabled_notes AFTER UPDATE OF disabled_at ON users
    FOR EACH ROW EXECUTE FUNCTION users_disabled_notes();

-- Flipping the flag is not an edit of the note: no event (the reads decide what a
-- disabled author's notes show).
CREATE OR REPLACE FUNCTION notes_updated_events() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM append_events(ARRAY(
        SELECT change FROM (
            SELECT n.tenant_id, n.id, 1 AS step,
                   ROW(n.tenant_id, 'note.deleted', n.id, n.user_id, 'others', false, o.location)::event_change AS change
            FROM new_rows n JOIN old_rows o ON o.tenant_id = n.tenant_id AND o.id = n.id
            WHERE o.visibility = 'public' AND n.visibility = 'private' AND o.author_disabled = n.author_disabled
            UNION ALL
            SELECT n.tenant_id, n.id, 2,
                   ROW(n.tenant_id, 'note.updated', n.id, n.user_id, note_audience(n),
                       o.visibility = 'private' AND n.visibility = 'public', n.location)::event_change
            FROM new_rows n JOIN old_rows o ON o.tenant_id = n.tenant_id AND o.id = n.id
            WHERE o.author_disabled = n.author_disabled
        ) changes ORDER BY tenant_id, id, step));
    RETURN NULL;
END $$;

-- 2. The grid counts a note by its own columns ----------------------------------------
-- The triggers gather their rows into an array first, as the event triggers do (0008):
-- Citus plans an INSERT … SELECT into a distributed table apart from the trigger, where
-- the transition table (new_rows, old_rows) does not exist; from an array it works.
CREATE TYPE grid_delta AS (tenant_id bigint, note_id bigint, lat double precision, lng double precision, delta smallint);

CREATE FUNCTION append_grid_deltas(p_deltas grid_delta[]) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF cardinality(p_deltas) = 0 THEN RETURN; END IF;
    INSERT INTO note_grid_deltas (tenant_id, note_id, lat, lng, delta)
    SELECT d.tenant_id, d.note_id, d.lat, d.lng, d.delta FROM unnest(p_deltas) AS d;
END $$;

CREATE OR REPLACE FUNCTION notes_grid_inserted() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
BEGIN
    PERFORM append_grid_deltas(ARRAY(
        SELECT ROW(n.tenant_id, n.id, ST_Y(n.location::geometry), ST_X(n.location::geometry), 1)::grid_delta
        FROM new_rows n WHERE n.visibility = 'public' AND NOT n.author_disabled));
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION notes_grid_deleted() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
BEGIN
    PERFORM append_grid_deltas(ARRAY(
        SELECT ROW(o.tenant_id, o.id, ST_Y(o.location::geometry), ST_X(o.location::geometry), -1)::grid_delta
        FROM old_rows o WHERE o.visibility = 'public' AND NOT o.author_disabled));
    RETURN NULL;
END $$;

-- A change of visibility, position or author's state: out where it was counted, in
-- where it now counts.
CREATE OR REPLACE FUNCTION notes_grid_updated() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
BEGIN
    PERFORM append_grid_deltas(ARRAY(
        SELECT ROW(o.tenant_id, o.id, ST_Y(o.location::geometry), ST_X(o.location::geometry), -1)::grid_delta
        FROM old_rows o JOIN new_rows n ON n.tenant_id = o.tenant_id AND n.id = o.id
        WHERE (o.visibility, o.location::geometry, o.author_disabled) IS DISTINCT FROM (n.visibility, n.location::geometry, n.author_disabled)
          AND o.visibility = 'public' AND NOT o.author_disabled
        UNION ALL
        SELECT ROW(n.tenant_id, n.id, ST_Y(n.location::geometry), ST_X(n.location::geometry), 1)::grid_delta
        FROM old_rows o JOIN new_rows n ON n.tenant_id = o.tenant_id AND n.id = o.id
        WHERE (o.visibility, o.location::geometry, o.author_disabled) IS DISTINCT FROM (n.visibility, n.location::geometry, n.author_disabled)
          AND n.visibility = 'public' AND NOT n.author_disabled));
    RETURN NULL;
END $$;
DROP FUNCTION note_counts_on_grid(bigint, bigint, text);

CREATE OR REPLACE FUNCTION admin.rebuild_note_grid() RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE counted bigint;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('fold_note_grid'));
    LOCK TABLE note_grid_cells, note_grid_deltas IN EXCLUSIVE MODE;
    TRUNCATE note_grid_cells, note_grid_deltas;
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
    SELECT coalesce(sum(count), 0) INTO counted FROM note_grid_cells WHERE zoom = 0;
    RETURN counted;
END $$;

-- 3. ON DELETE SET NULL (column) as triggers -------------------------------------------
CREATE FUNCTION users_deleted_places() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
BEGIN
    UPDATE places SET created_by = NULL WHERE tenant_id = OLD.tenant_id AND created_by = OLD.id;
    RETURN OLD;
END $$;
ALTER TABLE places DROP CONSTRAINT places_tenant_id_created_by_fkey;
ALTER TABLE places ADD FOREIGN KEY (tenant_id, created_by) REFERENCES users (tenant_id, id);
CREATE TRIGGER users_deleted_places BEFORE DELETE ON users FOR EACH ROW EXECUTE FUNCTION users_deleted_places();

CREATE FUNCTION places_deleted_notes() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
BEGIN
    UPDATE notes SET place_id = NULL WHERE tenant_id = OLD.tenant_id AND place_id = OLD.id;
    RETURN OLD;
END $$;
ALTER TABLE notes DROP CONSTRAINT notes_tenant_id_place_id_fkey;
ALTER TABLE notes ADD FOREIGN KEY (tenant_id, place_id) REFERENCES places (tenant_id, id);
CREATE TRIGGER places_deleted_notes BEFORE DELETE ON places FOR EACH ROW EXECUTE FUNCTION places_deleted_notes();

-- 4. Unique keys that name the tenant ---------------------------------------------------
-- Tokens now carry their tenant and are found by (tenant_id, hash), the primary key. The
-- hash-only indexes serve the lookups of tokens issued before tokens named their tenant,
-- for one lifetime of a refresh token; a later migration drops them. A hash is SHA-256 of 256 random bits:
-- the index need not enforce what chance already does.
DROP INDEX session_tokens_hash;
CREATE INDEX session_tokens_legacy_hash ON session_tokens (token_hash);
DROP INDEX stream_tickets_hash;
CREATE INDEX stream_tickets_legacy_hash ON stream_tickets (ticket_hash);

-- Ids come from one sequence: the index need not say they are unique, and Citus gives
-- each node its own range of it once it is the column's default.
DROP INDEX events_log_order;
CREATE INDEX events_log_order ON events ((id + 0));
ALTER TABLE events ALTER COLUMN id SET DEFAULT nextval('event_ids');

ALTER TABLE note_grid_deltas DROP CONSTRAINT note_grid_deltas_pkey;
ALTER TABLE note_grid_deltas ADD PRIMARY KEY (tenant_id, id);
DROP INDEX note_grid_deltas_tenant;

-- 5. One tenant's fold ------------------------------------------------------------------
-- Moves up to p_batch of p_tenant's oldest deltas into its cells; the number moved. One
-- fold per tenant runs at once (the others return 0), so a tenant's deltas fold in order.
-- A cell emptied is deleted.
CREATE FUNCTION fold_note_grid(p_tenant bigint, p_batch integer) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
DECLARE moved integer; emptied_zoom smallint[]; emptied_x integer[]; emptied_y integer[];
BEGIN
    IF NOT pg_try_advisory_xact_lock(hashtext('fold_note_grid'), p_tenant::integer # (p_tenant >> 32)::integer) THEN
        RETURN 0;
    END IF;
    WITH taken AS (
        DELETE FROM note_grid_deltas
        WHERE tenant_id = p_tenant
          AND id IN (SELECT id FROM note_grid_deltas WHERE tenant_id = p_tenant ORDER BY id LIMIT p_batch)
        RETURNING note_id, lat, lng, delta
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
    )
    SELECT (SELECT count(*) FROM taken),
           array_agg(u.zoom) FILTER (WHERE u.count = 0), array_agg(u.x) FILTER (WHERE u.count = 0),
           array_agg(u.y) FILTER (WHERE u.count = 0)
    INTO moved, emptied_zoom, emptied_x, emptied_y
    FROM upserted u;
    IF emptied_zoom IS NOT NULL THEN
        DELETE FROM note_grid_cells c
        USING unnest(emptied_zoom, emptied_x, emptied_y) AS e(zoom, x, y)
        WHERE c.tenant_id = p_tenant AND c.zoom = e.zoom AND c.x = e.x AND c.y = e.y AND c.count = 0;
    END IF;
    RETURN moved;
END $$;
REVOKE ALL ON FUNCTION fold_note_grid(bigint, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fold_note_grid(bigint, integer) TO landmark_app;

-- The tenants with deltas to fold, for NoteGridFolder. The folder keeps the deltas few,
-- so reading them all is cheap (a skip scan by recursion would be cheaper on one server,
-- but Citus cannot run a recursive query over a distributed table).
CREATE FUNCTION note_grid_tenants_to_fold() RETURNS SETOF bigint
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
AS $$ SELECT DISTINCT tenant_id FROM note_grid_deltas $$;
REVOKE ALL ON FUNCTION note_grid_tenants_to_fold() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION note_grid_tenants_to_fold() TO landmark_app;

-- The old entry point, for operators and older replicas during a rolling upgrade: every
-- tenant with deltas, one fold each.
CREATE OR REPLACE FUNCTION fold_note_grid(p_batch integer DEFAULT 10000) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
DECLARE moved integer := 0; v_tenant bigint;
BEGIN
    FOR v_tenant IN SELECT * FROM note_grid_tenants_to_fold() LOOP
        moved := moved + fold_note_grid(v_tenant, p_batch);
    END LOOP;
    RETURN moved;
END $$;

-- 6. Operators' functions, as Citus can run them ------------------------------------------
CREATE OR REPLACE FUNCTION admin.set_tenant_disabled(p_slug text, p_disabled boolean) RETURNS tenants
LANGUAGE plpgsql AS $$
DECLARE result tenants; v_now timestamptz := now();
BEGIN
    UPDATE tenants SET disabled_at = CASE WHEN p_disabled THEN coalesce(disabled_at, v_now) END
    WHERE slug = p_slug RETURNING * INTO result;
    IF NOT FOUND THEN RAISE EXCEPTION 'no tenant with slug %', p_slug USING ERRCODE = 'no_data_found'; END IF;
    RETURN result;
END $$;

CREATE OR REPLACE FUNCTION admin.set_user_disabled(p_slug text, p_username text, p_disabled boolean) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE v_tenant bigint; v_user bigint; v_now timestamptz := now();
BEGIN
    SELECT id INTO v_tenant FROM tenants WHERE slug = p_slug;
    UPDATE users SET disabled_at = CASE WHEN p_disabled THEN coalesce(disabled_at, v_now) END
    WHERE tenant_id = v_tenant AND lower(username) = lower(p_username) RETURNING id INTO v_user;
    IF v_user IS NULL THEN RETURN false; END IF;
    IF p_disabled THEN PERFORM admin.end_user_sessions(p_slug, p_username); END IF;
    RETURN true;
END $$;

CREATE OR REPLACE FUNCTION admin.end_user_sessions(p_slug text, p_username text) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE v_tenant bigint; v_user bigint; v_count integer;
BEGIN
    SELECT id INTO v_tenant FROM tenants WHERE slug = p_slug;
    SELECT id INTO v_user FROM users WHERE tenant_id = v_tenant AND lower(username) = lower(p_username);
    UPDATE sessions SET revoked_at = now(), revoked_reason = 'operator'
    WHERE tenant_id = v_tenant AND user_id = v_user AND revoked_at IS NULL;
    GET DIAGNOSTICS v_count = ROW_COUNT;
    RETURN v_count;
END $$;

CREATE OR REPLACE VIEW admin.tenant_overview AS
WITH users_per AS (SELECT tenant_id, count(*) AS users FROM users GROUP BY tenant_id),
     notes_per AS (SELECT tenant_id, count(*) AS notes, max(updated_at) AS last_note FROM notes GROUP BY tenant_id),
     places_per AS (SELECT tenant_id, count(*) AS places FROM places GROUP BY tenant_id),
     sessions_per AS (
         SELECT tenant_id, count(*) FILTER (WHERE revoked_at IS NULL AND expires_at > now()) AS active_sessions,
                max(last_used_at) AS last_session
         FROM sessions GROUP BY tenant_id)
SELECT t.slug, t.name, t.disabled_at IS NOT NULL AS disabled, t.min_password_length, t.created_at,
       coalesce(u.users, 0) AS users, coalesce(n.notes, 0) AS notes, coalesce(p.places, 0) AS places,
       coalesce(s.active_sessions, 0) AS active_sessions, greatest(s.last_session, n.last_note) AS last_activity
FROM tenants t
LEFT JOIN users_per u ON u.tenant_id = t.id
LEFT JOIN notes_per n ON n.tenant_id = t.id
LEFT JOIN places_per p ON p.tenant_id = t.id
LEFT JOIN sessions_per s ON s.tenant_id = t.id;

-- In DO UPDATE SET "now" is excluded.updated_at (the column's default, now()): Citus
-- refuses functions there that are not immutable.
CREATE OR REPLACE FUNCTION admin.import_places(p_slug text, p_places jsonb)
RETURNS TABLE (inserted integer, updated integer, unchanged integer)
LANGUAGE plpgsql AS $$
DECLARE
    v_tenant bigint;
    v_row jsonb;
    v_index integer := 0;
    v_name text;
    v_duplicate text;
BEGIN
    SELECT id INTO v_tenant FROM tenants WHERE slug = p_slug;
    IF v_tenant IS NULL THEN
        RAISE EXCEPTION 'no tenant with slug %', p_slug USING ERRCODE = 'no_data_found';
    END IF;
    IF jsonb_typeof(p_places) IS DISTINCT FROM 'array' THEN
        RAISE EXCEPTION 'the places must be a JSON array of objects' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    FOR v_row IN SELECT value FROM jsonb_array_elements(p_places) LOOP
        IF jsonb_typeof(v_row) <> 'object' THEN
            RAISE EXCEPTION 'row %: must be an object', v_index USING ERRCODE = 'invalid_parameter_value';
        END IF;
        v_name := CASE WHEN jsonb_typeof(v_row->'name') = 'string' THEN btrim(v_row->>'name') END;
        IF v_name IS NULL OR char_length(v_name) NOT BETWEEN 1 AND 100 THEN
            RAISE EXCEPTION 'row %: name must be a string of 1 to 100 characters', v_index USING ERRCODE = 'invalid_parameter_value';
        END IF;
        IF jsonb_typeof(v_row->'lat') IS DISTINCT FROM 'number' OR (v_row->>'lat')::float8 NOT BETWEEN -90 AND 90 THEN
            RAISE EXCEPTION 'row %: lat must be a number from -90 to 90', v_index USING ERRCODE = 'invalid_parameter_value';
        END IF;
        IF jsonb_typeof(v_row->'lng') IS DISTINCT FROM 'number' OR (v_row->>'lng')::float8 NOT BETWEEN -180 AND 180 THEN
            RAISE EXCEPTION 'row %: lng must be a number from -180 to 180', v_index USING ERRCODE = 'invalid_parameter_value';
        END IF;
        IF v_row ? 'key' AND (jsonb_typeof(v_row->'key') <> 'string' OR char_length(v_row->>'key') NOT BETWEEN 1 AND 200) THEN
            RAISE EXCEPTION 'row %: key must be a string of 1 to 200 characters', v_index USING ERRCODE = 'invalid_parameter_value';
        END IF;
        v_index := v_index + 1;
    END LOOP;

    SELECT key INTO v_duplicate FROM (
        SELECT coalesce(value->>'key', lower(btrim(value->>'name'))) AS key
        FROM jsonb_array_elements(p_places)
    ) keys GROUP BY key HAVING count(*) > 1 LIMIT 1;
    IF v_duplicate IS NOT NULL THEN
        RAISE EXCEPTION 'two rows share the key %; give each place a distinct name or "key"', v_duplicate
            USING ERRCODE = 'invalid_parameter_value';
    END IF;

    RETURN QUERY
    WITH incoming AS (
        SELECT coalesce(value->>'key', lower(btrim(value->>'name'))) AS key,
               btrim(value->>'name') AS name,
               -- -180 is stored as 180 (the trigger above); compare in that spelling too.
               ST_SetSRID(ST_MakePoint(CASE WHEN (value->>'lng')::float8 = -180 THEN 180 ELSE (value->>'lng')::float8 END,
                                       (value->>'lat')::float8), 4326)::geography AS location,
               value - 'name' - 'lat' - 'lng' - 'key' AS details
        FROM jsonb_array_elements(p_places)
    ),
    written AS (
        INSERT INTO places AS p (tenant_id, name, location, kind, details, import_key)
        SELECT v_tenant, name, location, 'default', details, key FROM incoming
        ON CONFLICT (tenant_id, import_key) WHERE import_key IS NOT NULL DO UPDATE
            SET name = excluded.name, location = excluded.location, details = excluded.details, updated_at = excluded.updated_at
            WHERE (p.name, p.details, ST_AsBinary(p.location)) IS DISTINCT FROM (excluded.name, excluded.details, ST_AsBinary(excluded.location))
        RETURNING xmax = 0 AS was_inserted
    )
    SELECT count(*) FILTER (WHERE was_inserted)::integer,
           count(*) FILTER (WHERE NOT was_inserted)::integer,
           ((SELECT count(*) FROM incoming) - count(*))::integer
    FROM written;
END $$;

CREATE OR REPLACE FUNCTION admin.set_identity_provider(
    p_slug text, p_provider text, p_client_ids text[],
    p_issuer text DEFAULT NULL, p_jwks_uri text DEFAULT NULL, p_nonce text DEFAULT NULL
) RETURNS identity_providers
LANGUAGE plpgsql AS $$
DECLARE v_tenant bigint; result identity_providers;
BEGIN
    SELECT id INTO v_tenant FROM tenants WHERE slug = p_slug;
    IF v_tenant IS NULL THEN RAISE EXCEPTION 'no tenant with slug %', p_slug USING ERRCODE = 'no_data_found'; END IF;
    INSERT INTO identity_providers AS p (tenant_id, provider, client_ids, issuer, jwks_uri, nonce)
    VALUES (v_tenant, p_provider, p_client_ids, p_issuer, p_jwks_uri,
            coalesce(p_nonce, CASE WHEN p_provider = 'apple' THEN 'hashed' WHEN p_provider = 'google' THEN 'either' ELSE 'raw' END))
    ON CONFLICT (tenant_id, provider) DO UPDATE
    SET client_ids = excluded.client_ids, issuer = excluded.issuer, jwks_uri = excluded.jwks_uri,
        nonce = CASE WHEN p_nonce IS NULL THEN p.nonce ELSE excluded.nonce END, updated_at = excluded.updated_at
    RETURNING * INTO result;
    RETURN result;
END $$;

-- The tenant first, then statements that name it (routed to its shard on Citus).
CREATE OR REPLACE FUNCTION admin.set_apple_sign_in_key(p_slug text, p_team_id text, p_key_id text, p_private_key text)
RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE v_tenant bigint;
BEGIN
    SELECT id INTO v_tenant FROM tenants WHERE slug = p_slug;
    UPDATE identity_providers SET apple_team_id = p_team_id, apple_key_id = p_key_id,
        apple_private_key = p_private_key, updated_at = now()
    WHERE tenant_id = v_tenant AND provider = 'apple';
    RETURN FOUND;
END $$;

CREATE OR REPLACE FUNCTION admin.remove_identity_provider(p_slug text, p_provider text) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE v_tenant bigint;
BEGIN
    SELECT id INTO v_tenant FROM tenants WHERE slug = p_slug;
    DELETE FROM identity_providers WHERE tenant_id = v_tenant AND provider = p_provider;
    RETURN FOUND;
END $$;

-- Citus cannot plan a SQL function's statement that reads a distributed table with the
-- function's parameters in it; PL/pgSQL it can. Tickets issued before this release
-- (without their tenant) are still redeemed here, for their minute of life after an upgrade.
CREATE OR REPLACE FUNCTION redeem_stream_ticket(p_ticket_hash bytea)
RETURNS TABLE (tenant_id bigint, tenant_slug text, user_id bigint, username text, session_id bigint, access_token_hash bytea)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
DECLARE v_token bytea; v_expires timestamptz;
BEGIN
    DELETE FROM stream_tickets t WHERE t.ticket_hash = p_ticket_hash
    RETURNING t.access_token_hash, t.expires_at INTO v_token, v_expires;
    IF v_token IS NULL OR v_expires <= now() THEN RETURN; END IF;
    RETURN QUERY
    SELECT a.tenant_id, a.tenant_slug, a.user_id, a.username, a.session_id, v_token
    FROM authenticate_access_token(v_token) a;
END $$;

-- A time some seconds after another. timestamptz + interval is only STABLE (an interval
-- of days or months depends on the time zone); one of seconds does not, so this is
-- IMMUTABLE, which Citus requires of functions in an upsert's DO UPDATE SET and of
-- functions of a column in an UPDATE's SET (LoginThrottle, NoteStore).
CREATE FUNCTION seconds_after(p_time timestamptz, p_seconds double precision) RETURNS timestamptz
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT p_time + make_interval(secs => p_seconds) $$;

-- 7. Distribution -------------------------------------------------------------------------
-- The tables as Citus should hold them, and what is not so: no rows where the citus
-- extension is absent.
CREATE FUNCTION distribution_problems() RETURNS SETOF text
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public, pg_temp
AS $$
DECLARE v_table regclass; v_colocation integer; v_kind "char"; v_key text;
BEGIN
    IF NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN RETURN; END IF;
    IF NOT EXISTS (SELECT FROM pg_dist_node WHERE noderole = 'primary' AND shouldhaveshards) THEN
        RETURN NEXT 'no worker node: add workers with citus_add_node() first';
    END IF;
    EXECUTE $q$ SELECT partmethod FROM pg_dist_partition WHERE logicalrelid = 'tenants'::regclass $q$ INTO v_kind;
    IF v_kind IS DISTINCT FROM 'n' THEN RETURN NEXT 'tenants is not a reference table'; END IF;
    SELECT colocationid INTO v_colocation FROM pg_dist_partition WHERE logicalrelid = 'users'::regclass;
    FOR v_table IN SELECT * FROM tenant_tables() LOOP
        SELECT partmethod, column_to_column_name(logicalrelid, partkey)
        INTO v_kind, v_key FROM pg_dist_partition p WHERE p.logicalrelid = v_table;
        IF v_kind IS NULL THEN
            RETURN NEXT format('%s is not distributed', v_table);
        ELSIF v_kind <> 'h' OR v_key <> 'tenant_id' THEN
            RETURN NEXT format('%s is not distributed by tenant_id', v_table);
        ELSIF (SELECT colocationid FROM pg_dist_partition WHERE logicalrelid = v_table) IS DISTINCT FROM v_colocation THEN
            RETURN NEXT format('%s is not colocated with users', v_table);
        END IF;
    END LOOP;
    IF current_setting('citus.enable_unsafe_triggers') <> 'on' THEN
        RETURN NEXT 'citus.enable_unsafe_triggers is off: the tables'' triggers must run on the workers';
    END IF;
END $$;
REVOKE ALL ON FUNCTION distribution_problems() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION distribution_problems() TO landmark_app;

-- Every table with a tenant_id column, a table before those whose foreign keys name it:
-- the order Citus needs them distributed in.
CREATE FUNCTION tenant_tables() RETURNS SETOF regclass
LANGUAGE sql STABLE SET search_path = public, pg_temp
AS $$
    WITH RECURSIVE tables AS (
        SELECT c.oid FROM pg_class c
        JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public'
        JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped
        WHERE c.relkind = 'r'
    ), edges AS (
        SELECT conrelid AS referencing, confrelid AS referenced FROM pg_constraint
        WHERE contype = 'f' AND conrelid <> confrelid
          AND conrelid IN (SELECT oid FROM tables) AND confrelid IN (SELECT oid FROM tables)
    ), walk (oid, depth) AS (
        SELECT oid, 0 FROM tables
        UNION ALL
        SELECT e.referencing, w.depth + 1 FROM walk w JOIN edges e ON e.referenced = w.oid WHERE w.depth < 32
    )
    SELECT oid::regclass FROM walk GROUP BY oid ORDER BY max(depth), oid::regclass::text
$$;

CREATE FUNCTION admin.distribute() RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE v_table regclass; v_function regprocedure;
BEGIN
    IF NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN RETURN; END IF;
    IF NOT EXISTS (SELECT FROM pg_dist_node WHERE noderole = 'primary' AND shouldhaveshards) THEN
        RAISE EXCEPTION 'no worker node: add workers with citus_add_node() first';
    END IF;
    -- tenants alone: by default Citus would turn every table with a foreign key to it
    -- into a coordinator-local table, and those with identity columns cannot be distributed.
    SET LOCAL citus.enable_local_reference_table_foreign_keys = off;
    SET LOCAL citus.multi_shard_modify_mode = 'sequential';
    IF NOT EXISTS (SELECT FROM pg_dist_partition WHERE logicalrelid = 'tenants'::regclass) THEN
        PERFORM create_reference_table('tenants');
        RETURN NEXT 'tenants: reference table';
    END IF;
    IF NOT EXISTS (SELECT FROM pg_dist_partition WHERE logicalrelid = 'users'::regclass) THEN
        PERFORM create_distributed_table('users', 'tenant_id');
        RETURN NEXT 'users: distributed by tenant_id';
    END IF;
    FOR v_table IN SELECT * FROM tenant_tables() LOOP
        IF NOT EXISTS (SELECT FROM pg_dist_partition WHERE logicalrelid = v_table) THEN
            PERFORM create_distributed_table(v_table::text, 'tenant_id', colocate_with => 'users');
            RETURN NEXT format('%s: distributed by tenant_id', v_table);
        END IF;
    END LOOP;
    -- The functions that policies and triggers call run on the workers too. Citus copies
    -- a function when it is created, unless it was created with copying off (0001) or
    -- before the tables it follows were distributed.
    FOR v_function IN
        SELECT p.oid::regprocedure FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname = 'public' AND p.proowner = current_user::regrole AND p.prokind = 'f'
          AND NOT EXISTS (SELECT FROM pg_dist_object d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid)
    LOOP
        PERFORM create_distributed_function(v_function);
        RETURN NEXT format('%s: on every node', v_function);
    END LOOP;
    EXECUTE format('ALTER DATABASE %I SET citus.propagate_set_commands = %L', current_database(), 'local');
END $$;
