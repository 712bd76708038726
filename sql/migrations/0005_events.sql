-- The event log behind GET /v1/events.
--
-- Triggers write one event per created, updated or deleted note or place, in
-- the same transaction as the change, so an event exists exactly when its
-- change committed. Ids count per tenant from a counter row that each writer
-- locks until it commits: a tenant's events therefore become visible in id
-- order, and a reader that has seen id N can never later find an N-1 appear.
-- (A global sequence would hand out ids in one order and commit them in
-- another.) The cost is that one tenant's writes commit one at a time.

CREATE TABLE event_counters (
    tenant_id bigint PRIMARY KEY REFERENCES tenants (id),
    last_id bigint NOT NULL
);

CREATE TABLE events (
    tenant_id bigint NOT NULL REFERENCES tenants (id),
    id bigint NOT NULL,
    kind text NOT NULL,
    -- The note's author or the place's creator.
    owner_id bigint,
    -- Who may see it: everyone, only the owner (a private note), or everyone but
    -- the owner (a note just made private disappears from others' maps).
    audience text NOT NULL DEFAULT 'all' CHECK (audience IN ('all', 'owner', 'others')),
    lat double precision,
    lng double precision,
    -- The object as API.md shows it, less the per-caller is_mine; a deletion carries only the id.
    data jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id)
);
CREATE INDEX events_created ON events (created_at);

ALTER TABLE event_counters ENABLE ROW LEVEL SECURITY;
ALTER TABLE events ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON event_counters USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
CREATE POLICY tenant_isolation ON events USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
GRANT SELECT, INSERT, UPDATE ON event_counters TO landmark_app;
GRANT SELECT, INSERT ON events TO landmark_app;

CREATE FUNCTION api_timestamp(t timestamptz) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') $$;

-- Appends one event and wakes the listeners; returns its id.
-- One change to log. Triggers collect a statement's changes into an array of
-- these, so a bulk write costs one counter update, not one per row.
CREATE TYPE event_change AS (
    tenant_id bigint,
    kind text,
    owner_id bigint,
    audience text,
    location geography,
    data jsonb
);

-- Appends the changes in array order, numbering them per tenant after the
-- tenant's counter (whose row stays locked until commit), and wakes the listeners.
CREATE FUNCTION append_events(p_changes event_change[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE v_woken integer;
BEGIN
    IF cardinality(p_changes) = 0 THEN RETURN; END IF;
    WITH changes AS (
        SELECT c.*, c.ordinality AS position
        FROM unnest(p_changes) WITH ORDINALITY AS c
    ),
    counts AS (
        SELECT tenant_id, count(*) AS added FROM changes GROUP BY tenant_id
    ),
    bumped AS (
        INSERT INTO event_counters AS counter (tenant_id, last_id)
        SELECT tenant_id, added FROM counts
        ON CONFLICT (tenant_id) DO UPDATE SET last_id = counter.last_id + excluded.last_id
        RETURNING tenant_id, last_id
    ),
    written AS (
        INSERT INTO events (tenant_id, id, kind, owner_id, audience, lat, lng, data)
        SELECT c.tenant_id,
               b.last_id - n.added + row_number() OVER (PARTITION BY c.tenant_id ORDER BY c.position),
               c.kind, c.owner_id, c.audience, ST_Y(c.location::geometry), ST_X(c.location::geometry), c.data
        FROM changes c JOIN bumped b USING (tenant_id) JOIN counts n USING (tenant_id)
        RETURNING 1
    )
    -- Delivered at commit, and only then: listeners never see an uncommitted event.
    SELECT count(pg_notify('lr_events', b.tenant_id::text || ':' || b.last_id::text)) INTO v_woken FROM bumped b;
END $$;

-- The note as API.md shows it, less the per-caller is_mine.
CREATE FUNCTION note_event_data(n notes) RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object(
        'id', n.id::text,
        'body', n.body,
        'lat', ST_Y(n.location::geometry),
        'lng', ST_X(n.location::geometry),
        'author', jsonb_build_object('id', n.user_id::text, 'username',
                  (SELECT u.username FROM users u WHERE u.tenant_id = n.tenant_id AND u.id = n.user_id)),
        'visibility', n.visibility,
        'place_id', n.place_id::text,
        'created_at', api_timestamp(n.created_at),
        'updated_at', api_timestamp(n.updated_at))
$$;

CREATE FUNCTION note_audience(n notes) RETURNS text
LANGUAGE sql IMMUTABLE AS $$ SELECT CASE WHEN n.visibility = 'private' THEN 'owner' ELSE 'all' END $$;

CREATE FUNCTION notes_inserted_events() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM append_events(ARRAY(
        SELECT ROW(n.tenant_id, 'note.created', n.user_id, note_audience(n), n.location, note_event_data(n))::event_change
        FROM new_rows n ORDER BY n.tenant_id, n.id));
    RETURN NULL;
END $$;

-- A note made private also leaves everyone else's map: they get a deletion.
CREATE FUNCTION notes_updated_events() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM append_events(ARRAY(
        SELECT change FROM (
            SELECT n.tenant_id, n.id, 1 AS step,
                   ROW(n.tenant_id, 'note.deleted', n.user_id, 'others', o.location, jsonb_build_object('id', n.id::text))::event_change AS change
            FROM new_rows n JOIN old_rows o ON o.tenant_id = n.tenant_id AND o.id = n.id
            WHERE o.visibility = 'public' AND n.visibility = 'private'
            UNION ALL
            SELECT n.tenant_id, n.id, 2,
                   ROW(n.tenant_id, 'note.updated', n.user_id, note_audience(n), n.location, note_event_data(n))::event_change
            FROM new_rows n
        ) changes ORDER BY tenant_id, id, step));
    RETURN NULL;
END $$;

CREATE FUNCTION notes_deleted_events() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM append_events(ARRAY(
        SELECT ROW(o.tenant_id, 'note.deleted', o.user_id, note_audience(o), o.location, jsonb_build_object('id', o.id::text))::event_change
        FROM old_rows o ORDER BY o.tenant_id, o.id));
    RETURN NULL;
END $$;

CREATE TRIGGER notes_inserted_events AFTER INSERT ON notes REFERENCING NEW TABLE AS new_rows
FOR EACH STATEMENT EXECUTE FUNCTION notes_inserted_events();
CREATE TRIGGER notes_updated_events AFTER UPDATE ON notes REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
FOR EACH STATEMENT EXECUTE FUNCTION notes_updated_events();
CREATE TRIGGER notes_deleted_events AFTER DELETE ON notes REFERENCING OLD TABLE AS old_rows
FOR EACH STATEMENT EXECUTE FUNCTION notes_deleted_events();

CREATE FUNCTION place_event_data(p places) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$
    SELECT jsonb_build_object(
        'id', p.id::text,
        'name', p.name,
        'lat', ST_Y(p.location::geometry),
        'lng', ST_X(p.location::geometry),
        'kind', p.kind,
        'created_by', p.created_by::text,
        'created_at', api_timestamp(p.created_at))
$$;

CREATE FUNCTION places_inserted_events() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM append_events(ARRAY(
        SELECT ROW(p.tenant_id, 'place.created', p.created_by, 'all', p.location, place_event_data(p))::event_change
        FROM new_rows p ORDER BY p.tenant_id, p.id));
    RETURN NULL;
END $$;

CREATE FUNCTION places_updated_events() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM append_events(ARRAY(
        SELECT ROW(p.tenant_id, 'place.updated', p.created_by, 'all', p.location, place_event_data(p))::event_change
        FROM new_rows p ORDER BY p.tenant_id, p.id));
    RETURN NULL;
END $$;

CREATE FUNCTION places_deleted_events() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM append_events(ARRAY(
        SELECT ROW(o.tenant_id, 'place.deleted', o.created_by, 'all', o.location, jsonb_build_object('id', o.id::text))::event_change
        FROM old_rows o ORDER BY o.tenant_id, o.id));
    RETURN NULL;
END $$;

CREATE TRIGGER places_inserted_events AFTER INSERT ON places REFERENCING NEW TABLE AS new_rows
FOR EACH STATEMENT EXECUTE FUNCTION places_inserted_events();
CREATE TRIGGER places_updated_events AFTER UPDATE ON places REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
FOR EACH STATEMENT EXECUTE FUNCTION places_updated_events();
CREATE TRIGGER places_deleted_events AFTER DELETE ON places REFERENCING OLD TABLE AS old_rows
FOR EACH STATEMENT EXECUTE FUNCTION places_deleted_events();

-- Events are kept 24 hours: long enough for any client to resume with Last-Event-ID.
-- The service calls this on a timer; an operator may too (SELECT admin.purge_events();).
CREATE FUNCTION purge_events() RETURNS bigint
LANGUAGE sql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
    WITH purged AS (DELETE FROM events WHERE created_at < now() - interval '24 hours' RETURNING 1)
    SELECT count(*) FROM purged
$$;
REVOKE ALL ON FUNCTION purge_events() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION purge_events() TO landmark_app;

CREATE FUNCTION admin.purge_events() RETURNS bigint LANGUAGE sql AS $$ SELECT purge_events() $$;
