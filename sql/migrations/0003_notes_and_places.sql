-- Places (named landmarks) and notes, with the indexes their queries need.
--
-- Composite indexes lead with tenant_id (btree_gist / btree_gin), so one index
-- serves one tenant under row-level security and the schema stays ready for
-- Citus with tenant_id as the distribution column.

CREATE TABLE places (
    tenant_id bigint NOT NULL REFERENCES tenants (id),
    id bigint GENERATED ALWAYS AS IDENTITY,
    name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
    location geography(Point, 4326) NOT NULL,
    kind text NOT NULL CHECK (kind IN ('default', 'custom')),
    created_by bigint,
    -- Extra fields of an imported place, kept as given.
    details jsonb NOT NULL DEFAULT '{}'::jsonb,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    -- PostgreSQL 15's column list keeps tenant_id when the creator is deleted.
    FOREIGN KEY (tenant_id, created_by) REFERENCES users (tenant_id, id) ON DELETE SET NULL (created_by)
);
CREATE INDEX places_location ON places USING gist (tenant_id, location);
CREATE INDEX places_name_trgm ON places USING gin (tenant_id, name gin_trgm_ops);
CREATE INDEX places_created_by ON places (tenant_id, created_by) WHERE created_by IS NOT NULL;

CREATE TABLE notes (
    tenant_id bigint NOT NULL REFERENCES tenants (id),
    id bigint GENERATED ALWAYS AS IDENTITY,
    user_id bigint NOT NULL,
    body text NOT NULL CHECK (char_length(body) BETWEEN 1 AND 500),
    location geography(Point, 4326) NOT NULL,
    visibility text NOT NULL DEFAULT 'public' CHECK (visibility IN ('public', 'private')),
    place_id bigint,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, place_id) REFERENCES places (tenant_id, id) ON DELETE SET NULL (place_id)
);
-- Nearest first: KNN (<->) over this GiST returns rows in distance order.
CREATE INDEX notes_location ON notes USING gist (tenant_id, location);
-- Substring search (ILIKE '%…%') on bodies and, through users, on usernames.
CREATE INDEX notes_body_trgm ON notes USING gin (tenant_id, body gin_trgm_ops);
CREATE INDEX users_username_trgm ON users USING gin (tenant_id, username gin_trgm_ops);
-- Newest first, overall and per author (keyset pages walk these backwards).
CREATE INDEX notes_newest ON notes (tenant_id, created_at DESC, id DESC);
CREATE INDEX notes_author_newest ON notes (tenant_id, user_id, created_at DESC, id DESC);
CREATE INDEX notes_place ON notes (tenant_id, place_id) WHERE place_id IS NOT NULL;

-- POST /v1/notes with Idempotency-Key: the first request claims the key; a
-- retry replays its stored response, or gets 409 while it is still running.
CREATE TABLE idempotency_keys (
    tenant_id bigint NOT NULL,
    user_id bigint NOT NULL,
    key text NOT NULL,
    request_hash bytea NOT NULL,
    response_status integer,
    response_body text,
    response_location text,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, user_id, key),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

ALTER TABLE places ENABLE ROW LEVEL SECURITY;
ALTER TABLE notes ENABLE ROW LEVEL SECURITY;
ALTER TABLE idempotency_keys ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON places USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
CREATE POLICY tenant_isolation ON notes USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
CREATE POLICY tenant_isolation ON idempotency_keys USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
GRANT SELECT, INSERT, UPDATE, DELETE ON places, notes, idempotency_keys TO landmark_app;

DROP VIEW admin.tenant_overview;
CREATE VIEW admin.tenant_overview AS
SELECT t.slug, t.name, t.disabled_at IS NOT NULL AS disabled, t.min_password_length, t.created_at,
       (SELECT count(*) FROM users u WHERE u.tenant_id = t.id) AS users,
       (SELECT count(*) FROM notes n WHERE n.tenant_id = t.id) AS notes,
       (SELECT count(*) FROM places p WHERE p.tenant_id = t.id) AS places,
       (SELECT count(*) FROM sessions s WHERE s.tenant_id = t.id AND s.revoked_at IS NULL AND s.expires_at > now()) AS active_sessions,
       greatest((SELECT max(s.last_used_at) FROM sessions s WHERE s.tenant_id = t.id),
                (SELECT max(n.updated_at) FROM notes n WHERE n.tenant_id = t.id)) AS last_activity
FROM tenants t;
