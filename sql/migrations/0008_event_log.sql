-- The event log, rebuilt so that writers never wait for each other (issue 17).
--
-- Before: ids counted per tenant from a counter row that every writer locked
-- until COMMIT (a client round trip under a lock: one tenant's writes went one
-- at a time), and the trigger called pg_notify, whose commit-time lock
-- serialises every notifying transaction of the cluster.
--
-- Now:
-- * Ids come from one sequence. nextval takes no lock that another writer
--   waits on; an id is unique across the deployment, and ids are handed out in
--   time order but may become visible out of order (a transaction that took id
--   7 may commit after one that took 8).
-- * Readers therefore read only up to a horizon below which every id is final
--   (committed, or never going to be). The service computes it (EventHorizon):
--   it walks the ids above its last horizon in order, and stops at the first
--   missing id until every transaction that could still hold it has ended,
--   which pg_current_snapshot() tells exactly: an id missing from a snapshot in
--   which a later id is visible was taken by a transaction whose xid is below
--   that snapshot's xmax; once a later snapshot's xmin has passed that xmax,
--   the id is never coming (rolled back). append_events makes sure the writer
--   has its xid before it takes an id, which that argument needs.
-- * No pg_notify: the service polls the horizon (a probe of one index), so no
--   LISTEN session is needed either.
-- * Events store what the log needs to filter (kind, object, owner, audience,
--   position), not the object: a stream reads the note or place as it is now,
--   through the same statement and writer as GET, for the reader. So content
--   that was withdrawn (a note made private, a deleted note, a deleted or
--   disabled account) is never replayed from the log, and place events carry
--   exactly the object GET /v1/places/{id} returns.
--
-- The old log is dropped: it held at most 24 hours, and a client resuming from
-- one of its ids gets an explicit `reset` event (its id is older than the new
-- log's retention horizon, set below).

DROP TRIGGER notes_inserted_events ON notes;
DROP TRIGGER notes_updated_events ON notes;
DROP TRIGGER notes_deleted_events ON notes;
DROP TRIGGER places_inserted_events ON places;
DROP TRIGGER places_updated_events ON places;
DROP TRIGGER places_deleted_events ON places;
DROP FUNCTION notes_inserted_events();
DROP FUNCTION notes_updated_events();
DROP FUNCTION notes_deleted_events();
DROP FUNCTION places_inserted_events();
DROP FUNCTION places_updated_events();
DROP FUNCTION places_deleted_events();
DROP FUNCTION append_events(event_change[]);
DROP TYPE event_change;
DROP FUNCTION note_event_data(notes);
DROP FUNCTION place_event_data(places);
DROP FUNCTION admin.purge_events();
DROP FUNCTION purge_events();

-- Where the old log ended: resuming from an id at or below it is a reset.
CREATE TABLE event_log_state (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    -- Ids at or below this may have been purged: a resume from below it is a reset.
    purged_through bigint NOT NULL
);
INSERT INTO event_log_state (purged_through)
SELECT greatest(coalesce((SELECT max(id) FROM events), 0), coalesce((SELECT max(last_id) FROM event_counters), 0));
GRANT SELECT ON event_log_state TO landmark_app;

DROP TABLE events;
DROP TABLE event_counters;

CREATE SEQUENCE event_ids AS bigint;
SELECT setval('event_ids', (SELECT purged_through FROM event_log_state) + 1, false);

CREATE TABLE events (
    tenant_id bigint NOT NULL REFERENCES tenants (id),
    id bigint NOT NULL,
    kind text NOT NULL CHECK (kind IN ('note.created', 'note.updated', 'note.deleted',
                                       'place.created', 'place.updated', 'place.deleted')),
    -- The note's or place's id.
    object_id bigint NOT NULL,
    -- The note's author or the place's creator.
    owner_id bigint,
    -- Who may see it: everyone, only the owner (a private note), or everyone but
    -- the owner (a note just made private leaves everyone else's map). Created and
    -- updated events are also checked against the object as it is when read.
    audience text NOT NULL CHECK (audience IN ('all', 'owner', 'others')),
    -- An update that made a private note public: the others see it as note.created.
    became_public boolean NOT NULL DEFAULT false,
    -- Where the object is, for streams limited to a viewport (deletions included).
    lat double precision NOT NULL,
    lng double precision NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id)
);
-- The horizon walks every tenant's ids in order. The index is on the expression
-- id + 0, which only the horizon's query names, so a stream's read (which says
-- `id`) cannot take it over the primary key: when one tenant holds most of the
-- log the planner sees no gain in the tenant column and would pick the smaller
-- index, walking every tenant's events in the window.
CREATE UNIQUE INDEX events_log_order ON events ((id + 0));
-- Retention finds where 24 hours ago falls.
CREATE INDEX events_created ON events (created_at);
ALTER SEQUENCE event_ids OWNED BY events.id;

ALTER TABLE events ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON events USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
GRANT SELECT, INSERT ON events TO landmark_app;
GRANT USAGE ON SEQUENCE event_ids TO landmark_app;

-- One change to log; triggers collect a statement's changes into an array of these.
CREATE TYPE event_change AS (
    tenant_id bigint,
    kind text,
    object_id bigint,
    owner_id bigint,
    audience text,
    became_public boolean,
    location geography
);

-- Appends the changes in array order. The writer's xid is taken before its
-- first id (pg_current_xact_id assigns one if it has none yet): the horizon's
-- reasoning needs every id holder to have an xid from before it took the id.
CREATE FUNCTION append_events(p_changes event_change[]) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF cardinality(p_changes) = 0 THEN RETURN; END IF;
    PERFORM pg_current_xact_id();
    INSERT INTO events (tenant_id, id, kind, object_id, owner_id, audience, became_public, lat, lng)
    SELECT c.tenant_id, nextval('event_ids'), c.kind, c.object_id, c.owner_id, c.audience, c.became_public,
           ST_Y(c.location::geometry), ST_X(c.location::geometry)
    FROM unnest(p_changes) AS c;  -- unnest yields array order, and nextval is taken in it
END $$;

CREATE FUNCTION notes_inserted_events() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM append_events(ARRAY(
        SELECT ROW(n.tenant_id, 'note.created', n.id, n.user_id, note_audience(n), false, n.location)::event_change
        FROM new_rows n ORDER BY n.tenant_id, n.id));
    RETURN NULL;
END $$;

-- A note made private also leaves everyone else's map: they get a deletion. A
-- note made public reaches the others as created (became_public).
CREATE FUNCTION notes_updated_events() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM append_events(ARRAY(
        SELECT change FROM (
            SELECT n.tenant_id, n.id, 1 AS step,
                   ROW(n.tenant_id, 'note.deleted', n.id, n.user_id, 'others', false, o.location)::event_change AS change
            FROM new_rows n JOIN old_rows o ON o.tenant_id = n.tenant_id AND o.id = n.id
            WHERE o.visibility = 'public' AND n.visibility = 'private'
            UNION ALL
            SELECT n.tenant_id, n.id, 2,
                   ROW(n.tenant_id, 'note.updated', n.id, n.user_id, note_audience(n),
                       o.visibility = 'private' AND n.visibility = 'public', n.location)::event_change
            FROM new_rows n JOIN old_rows o ON o.tenant_id = n.tenant_id AND o.id = n.id
        ) changes ORDER BY tenant_id, id, step));
    RETURN NULL;
END $$;

CREATE FUNCTION notes_deleted_events() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM append_events(ARRAY(
        SELECT ROW(o.tenant_id, 'note.deleted', o.id, o.user_id, note_audience(o), false, o.location)::event_change
        FROM old_rows o ORDER BY o.tenant_id, o.id));
    RETURN NULL;
END $$;

CREATE TRIGGER notes_inserted_events AFTER INSERT ON notes REFERENCING NEW TABLE AS new_rows
FOR EACH STATEMENT EXECUTE FUNCTION notes_inserted_events();
CREATE TRIGGER notes_updated_events AFTER UPDATE ON notes REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
FOR EACH STATEMENT EXECUTE FUNCTION notes_updated_events();
CREATE TRIGGER notes_deleted_events AFTER DELETE ON notes REFERENCING OLD TABLE AS old_rows
FOR EACH STATEMENT EXECUTE FUNCTION notes_deleted_events();

-- One trigger function for the three place events: the kind follows the operation.
CREATE FUNCTION places_changed_events() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        PERFORM append_events(ARRAY(
            SELECT ROW(o.tenant_id, 'place.deleted', o.id, o.created_by, 'all', false, o.location)::event_change
            FROM old_rows o ORDER BY o.tenant_id, o.id));
    ELSE
        PERFORM append_events(ARRAY(
            SELECT ROW(p.tenant_id, CASE TG_OP WHEN 'INSERT' THEN 'place.created' ELSE 'place.updated' END,
                       p.id, p.created_by, 'all', false, p.location)::event_change
            FROM new_rows p ORDER BY p.tenant_id, p.id));
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER places_inserted_events AFTER INSERT ON places REFERENCING NEW TABLE AS new_rows
FOR EACH STATEMENT EXECUTE FUNCTION places_changed_events();
CREATE TRIGGER places_updated_events AFTER UPDATE ON places REFERENCING NEW TABLE AS new_rows
FOR EACH STATEMENT EXECUTE FUNCTION places_changed_events();
CREATE TRIGGER places_deleted_events AFTER DELETE ON places REFERENCING OLD TABLE AS old_rows
FOR EACH STATEMENT EXECUTE FUNCTION places_changed_events();

-- The ids above p_after in order, every tenant's, with the snapshot they were
-- read in: what EventHorizon needs to move the horizon. SECURITY DEFINER because
-- the horizon is one for the whole log, past row-level security; it returns
-- ids and tenant ids only. At most p_limit ids a call.
CREATE FUNCTION event_ids_after(p_after bigint, p_limit bigint)
RETURNS TABLE (snapshot_xmin bigint, snapshot_xmax bigint, ids bigint[], tenant_ids bigint[])
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
    SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint,
           pg_snapshot_xmax(pg_current_snapshot())::text::bigint,
           coalesce(array_agg(e.id ORDER BY e.id), '{}'),
           coalesce(array_agg(e.tenant_id ORDER BY e.id), '{}')
    FROM (SELECT id, tenant_id FROM events WHERE id + 0 > p_after ORDER BY id + 0 LIMIT least(p_limit, 100000)) e
$$;
REVOKE ALL ON FUNCTION event_ids_after(bigint, bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION event_ids_after(bigint, bigint) TO landmark_app;

-- Events are kept 24 hours: long enough for any client to resume with
-- Last-Event-ID. Purged as a prefix of ids, so "every id above purged_through is
-- still here" holds, and a resume from below it gets a reset.
CREATE FUNCTION purge_events() RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
DECLARE v_through bigint; v_count bigint;
BEGIN
    SELECT max(id) INTO v_through FROM events WHERE created_at < now() - interval '24 hours';
    IF v_through IS NULL THEN RETURN 0; END IF;
    UPDATE event_log_state SET purged_through = greatest(purged_through, v_through);
    DELETE FROM events WHERE id <= v_through;
    GET DIAGNOSTICS v_count = ROW_COUNT;
    RETURN v_count;
END $$;
REVOKE ALL ON FUNCTION purge_events() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION purge_events() TO landmark_app;

CREATE FUNCTION admin.purge_events() RETURNS bigint LANGUAGE sql AS $$ SELECT purge_events() $$;

-- Where a starting service puts its horizon: the newest visible id, and the
-- snapshot's xmax, below which transactions may still commit ids under it.
CREATE FUNCTION event_log_start() RETURNS TABLE (head bigint, snapshot_xmax bigint)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
    SELECT coalesce((SELECT max(id) FROM events), (SELECT purged_through FROM event_log_state)),
           pg_snapshot_xmax(pg_current_snapshot())::text::bigint
$$;
REVOKE ALL ON FUNCTION event_log_start() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION event_log_start() TO landmark_app;
