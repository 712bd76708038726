-- Push notifications (issue 39), first part: the devices a user's pushes go to, and the areas
-- they watch. Matching a new note against the watches, the outbox and the sender come later.

-- An app installation that can receive pushes: APNs's device token (hex, lower case), per
-- tenant. A token belongs to one account: the newest to register it (a phone changes hands,
-- or its user signs in as someone else). It is bound to the session that registered it, so a
-- session that ends (sign-out, sign-out everywhere, a password reset, a moderator's
-- suspension) stops its pushes at once, whatever the app does; deleting the session deletes it.
CREATE TABLE devices (
    tenant_id bigint NOT NULL,
    token text NOT NULL CONSTRAINT devices_token CHECK (token ~ '^[0-9a-f]{64,200}$'),
    user_id bigint NOT NULL,
    session_id bigint NOT NULL,
    platform text NOT NULL CONSTRAINT devices_platform CHECK (platform IN ('apns')),
    environment text NOT NULL CONSTRAINT devices_environment CHECK (environment IN ('production', 'sandbox')),
    -- The app's bundle id: APNs's topic.
    app_id text NOT NULL CONSTRAINT devices_app_id CHECK (app_id ~ '^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$' AND char_length(app_id) <= 155),
    created_at timestamptz NOT NULL,
    -- Registered again (apps do it at every launch): the user's oldest goes first at the limit.
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, token)
);
SELECT admin.distribute_new_table('devices');
ALTER TABLE devices ADD FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE;
ALTER TABLE devices ADD FOREIGN KEY (tenant_id, session_id) REFERENCES sessions (tenant_id, id) ON DELETE CASCADE;
CREATE INDEX devices_user ON devices (tenant_id, user_id, updated_at);
CREATE INDEX devices_session ON devices (tenant_id, session_id);
ALTER TABLE devices ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON devices USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
GRANT SELECT, INSERT, UPDATE, DELETE ON devices TO landmark_app;

-- An area a user wants to hear about: a circle, around a point or a place. `reach` is the
-- circle's bounding box as PostGIS's own ST_DWithin draws it (geocentric, so it holds across
-- the antimeridian and at the poles): the index finds the few watches whose box holds a new
-- note, and ST_DWithin on the spheroid decides at the edge.
CREATE TABLE watches (
    tenant_id bigint NOT NULL,
    id bigint GENERATED ALWAYS AS IDENTITY,
    user_id bigint NOT NULL,
    label text CONSTRAINT watches_label CHECK (char_length(label) BETWEEN 1 AND 60),
    center geography(Point, 4326) NOT NULL,
    radius_m integer NOT NULL CONSTRAINT watches_radius CHECK (radius_m BETWEEN 1 AND 1000000),
    reach geography GENERATED ALWAYS AS (_ST_Expand(center, radius_m::float8)) STORED,
    -- A watch of a place keeps the place's position; a deleted place leaves it a plain circle.
    place_id bigint,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, id)
);
SELECT admin.distribute_new_table('watches');
ALTER TABLE watches ADD FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE;
ALTER TABLE watches ADD FOREIGN KEY (tenant_id, place_id) REFERENCES places (tenant_id, id);
CREATE INDEX watches_user ON watches (tenant_id, user_id, id);
CREATE INDEX watches_reach ON watches USING gist (tenant_id, reach);
ALTER TABLE watches ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON watches USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
GRANT SELECT, INSERT, UPDATE, DELETE ON watches TO landmark_app;

-- ON DELETE SET NULL (place_id) as a trigger, as for notes (0016): Citus takes no foreign key
-- action that sets a column beside the distribution column.
CREATE FUNCTION places_deleted_watches() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
BEGIN
    UPDATE watches SET place_id = NULL, label = coalesce(label, left(OLD.name, 60))
    WHERE tenant_id = OLD.tenant_id AND place_id = OLD.id;
    RETURN OLD;
END $$;
CREATE TRIGGER places_deleted_watches BEFORE DELETE ON places FOR EACH ROW EXECUTE FUNCTION places_deleted_watches();
