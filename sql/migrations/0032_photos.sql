-- Photos on notes (and, with the same tables, on places): issue 36.
--
-- The bytes live here, in PostgreSQL, not on a volume: one backup and one restore hold the
-- notes and their photos together; a photo is written in one transaction with the check
-- that its note is the uploader's and has room for it; row-level security keeps tenants
-- apart as for every other table; two replicas need no shared disk; Citus distributes it by
-- tenant like the rest. What is stored is only what we made: each variant re-encoded by the
-- sandboxed worker (Sources/Photos), never the uploaded bytes, which are not kept.
--
-- A photo never changes: a new upload is a new id. So a variant's URL names its content
-- for good, and clients and caches may keep it (`Cache-Control: immutable`).

CREATE TABLE photos (
    tenant_id bigint NOT NULL,
    id bigint GENERATED ALWAYS AS IDENTITY,
    -- Who uploaded it: their quota, and deleting their account deletes it.
    owner_id bigint NOT NULL,
    -- Exactly one of these: what the photo is on.
    note_id bigint,
    place_id bigint,
    -- What the upload was, by its bytes (never served: for the operators' figures).
    source_format text NOT NULL CHECK (source_format IN ('jpeg', 'png', 'webp', 'heif')),
    -- The largest variant's size, orientation applied.
    width integer NOT NULL CHECK (width > 0),
    height integer NOT NULL CHECK (height > 0),
    -- The variants' bytes together: what counts against quotas.
    stored_bytes bigint NOT NULL CHECK (stored_bytes > 0),
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (tenant_id, id),
    CHECK ((note_id IS NULL) <> (place_id IS NULL))
);
SELECT admin.distribute_new_table('photos');
-- One constraint per statement (Citus takes no other subcommand beside an ADD CONSTRAINT).
ALTER TABLE photos ADD FOREIGN KEY (tenant_id) REFERENCES tenants (id);
ALTER TABLE photos ADD FOREIGN KEY (tenant_id, owner_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE;
ALTER TABLE photos ADD FOREIGN KEY (tenant_id, note_id) REFERENCES notes (tenant_id, id) ON DELETE CASCADE;
ALTER TABLE photos ADD FOREIGN KEY (tenant_id, place_id) REFERENCES places (tenant_id, id) ON DELETE CASCADE;
-- A note's photos, in upload order; and the cascade from a deleted note finds them.
CREATE INDEX photos_by_note ON photos (tenant_id, note_id, id) WHERE note_id IS NOT NULL;
CREATE INDEX photos_by_place ON photos (tenant_id, place_id, id) WHERE place_id IS NOT NULL;
-- The cascade from a deleted account, and the quota's sum.
CREATE INDEX photos_by_owner ON photos (tenant_id, owner_id);

CREATE TABLE photo_variants (
    tenant_id bigint NOT NULL,
    photo_id bigint NOT NULL,
    variant text NOT NULL CHECK (variant IN ('thumb', 'display', 'full')),
    width integer NOT NULL CHECK (width > 0),
    height integer NOT NULL CHECK (height > 0),
    -- SHA-256 of `data`: the ETag.
    sha256 bytea NOT NULL CHECK (octet_length(sha256) = 32),
    data bytea NOT NULL,
    PRIMARY KEY (tenant_id, photo_id, variant)
);
-- JPEG does not compress again: stored out of line without pglz's attempt at it. Before the
-- table is distributed: Citus refuses SET STORAGE on a distributed table.
ALTER TABLE photo_variants ALTER COLUMN data SET STORAGE EXTERNAL;
SELECT admin.distribute_new_table('photo_variants');
ALTER TABLE photo_variants ADD FOREIGN KEY (tenant_id, photo_id) REFERENCES photos (tenant_id, id) ON DELETE CASCADE;

ALTER TABLE photos ENABLE ROW LEVEL SECURITY;
ALTER TABLE photo_variants ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON photos USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
CREATE POLICY tenant_isolation ON photo_variants USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
GRANT SELECT, INSERT, DELETE ON photos, photo_variants TO landmark_app;

-- What a note's JSON says of its photos, kept on the note so that every read (a list, a
-- note by id, an event) writes them without a join: per photo, in the order they were
-- added, eight numbers: id, created_at in microseconds since 1970, then width and height of
-- full, display and thumb. Written by the service in the transaction that adds or removes
-- a photo, with the note locked; the photos table above is what it is made from and what
-- operators read. A change makes the note's `updated_at` later and logs a note.updated event.
ALTER TABLE notes ADD COLUMN photos bigint[] NOT NULL DEFAULT '{}';
ALTER TABLE notes ADD CONSTRAINT notes_photos_shape CHECK (cardinality(photos) % 8 = 0 AND array_position(photos, NULL) IS NULL);
-- The same for a place's photos: a place's creator adds them to a custom place, a
-- moderator of the tenant to a default one.
ALTER TABLE places ADD COLUMN photos bigint[] NOT NULL DEFAULT '{}';
ALTER TABLE places ADD CONSTRAINT places_photos_shape CHECK (cardinality(photos) % 8 = 0 AND array_position(photos, NULL) IS NULL);
-- `SELECT *` is expanded when a view is made: made again, each has the new column.
CREATE OR REPLACE VIEW tenant_notes AS
SELECT * FROM notes WHERE tenant_id = current_tenant_id() AND NOT author_disabled;
CREATE OR REPLACE VIEW tenant_places AS
SELECT * FROM places WHERE tenant_id = current_tenant_id();

-- What each user and each tenant stores, for their quotas (LR_PHOTO_BYTES_PER_USER and
-- _PER_TENANT), /metrics and the operators' admin.photo_usage(): kept by a trigger on
-- photos, so a photo deleted with its note or its account is counted out too.
CREATE TABLE photo_usage (
    tenant_id bigint NOT NULL,
    user_id bigint NOT NULL,
    photos bigint NOT NULL CHECK (photos >= 0),
    bytes bigint NOT NULL CHECK (bytes >= 0),
    PRIMARY KEY (tenant_id, user_id)
);
SELECT admin.distribute_new_table('photo_usage');
ALTER TABLE photo_usage ADD FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE;

-- A row per tenant: one row to read and lock per upload, however many users store photos.
CREATE TABLE tenant_photo_usage (
    tenant_id bigint NOT NULL PRIMARY KEY,
    photos bigint NOT NULL CHECK (photos >= 0),
    bytes bigint NOT NULL CHECK (bytes >= 0)
);
SELECT admin.distribute_new_table('tenant_photo_usage');
ALTER TABLE tenant_photo_usage ADD FOREIGN KEY (tenant_id) REFERENCES tenants (id) ON DELETE CASCADE;

ALTER TABLE photo_usage ENABLE ROW LEVEL SECURITY;
ALTER TABLE tenant_photo_usage ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON photo_usage USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
CREATE POLICY tenant_isolation ON tenant_photo_usage USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
GRANT SELECT ON photo_usage, tenant_photo_usage TO landmark_app;

CREATE FUNCTION photos_count_usage() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO photo_usage AS u (tenant_id, user_id, photos, bytes)
        VALUES (NEW.tenant_id, NEW.owner_id, 1, NEW.stored_bytes)
        ON CONFLICT (tenant_id, user_id) DO UPDATE SET photos = u.photos + 1, bytes = u.bytes + EXCLUDED.bytes;
        INSERT INTO tenant_photo_usage AS t (tenant_id, photos, bytes)
        VALUES (NEW.tenant_id, 1, NEW.stored_bytes)
        ON CONFLICT (tenant_id) DO UPDATE SET photos = t.photos + 1, bytes = t.bytes + EXCLUDED.bytes;
    ELSE
        -- The owner's row may be gone already (their account's deletion cascades to both).
        UPDATE photo_usage SET photos = photos - 1, bytes = bytes - OLD.stored_bytes
        WHERE tenant_id = OLD.tenant_id AND user_id = OLD.owner_id;
        UPDATE tenant_photo_usage SET photos = photos - 1, bytes = bytes - OLD.stored_bytes
        WHERE tenant_id = OLD.tenant_id;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER photos_count_usage AFTER INSERT OR DELETE ON photos FOR EACH ROW EXECUTE FUNCTION photos_count_usage();

-- For /metrics: each tenant's stored photos and bytes (ModerationGauges' pattern).
CREATE FUNCTION photo_usage_stats() RETURNS TABLE (tenant text, photos bigint, bytes bigint)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
    SELECT t.slug, u.photos, u.bytes FROM tenant_photo_usage u JOIN tenants t ON t.id = u.tenant_id
$$;
REVOKE ALL ON FUNCTION photo_usage_stats() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION photo_usage_stats() TO landmark_app;

-- For operators (psql): every tenant's photos, bytes and users who store any, the most
-- bytes first; with a slug, that tenant's users instead.
CREATE FUNCTION admin.photo_usage() RETURNS TABLE (tenant text, photos bigint, bytes bigint, users bigint)
LANGUAGE sql STABLE AS $$
    SELECT t.slug, coalesce(u.photos, 0), coalesce(u.bytes, 0),
           (SELECT count(*) FROM photo_usage p WHERE p.tenant_id = t.id AND p.photos > 0)
    FROM tenants t LEFT JOIN tenant_photo_usage u ON u.tenant_id = t.id
    ORDER BY 3 DESC, 1
$$;
CREATE FUNCTION admin.photo_usage(p_slug text) RETURNS TABLE (username text, photos bigint, bytes bigint)
LANGUAGE sql STABLE AS $$
    SELECT us.username, p.photos, p.bytes
    FROM photo_usage p JOIN users us ON us.tenant_id = p.tenant_id AND us.id = p.user_id
    WHERE p.tenant_id = (SELECT id FROM tenants WHERE slug = p_slug) AND p.photos > 0
    ORDER BY p.bytes DESC, us.username
$$;
