-- Reading notes fast under row-level security.
--
-- The planner may use a condition as an index condition on a table with
-- row-level security only when the condition's function is LEAKPROOF (it
-- could otherwise run on another tenant's row before the policy hides it).
-- ILIKE (texticlike) and every PostGIS operator (&&, ST_DWithin) are not, so
-- as landmark_app a substring search or a viewport query on notes falls back
-- to scanning every row of the tenant: the trigram and GiST indexes go unused.
-- (KNN ordering with <-> is an ORDER BY, not a condition, and is unaffected.)
-- Marking those functions LEAKPROOF needs a superuser and would be untrue.
--
-- So the service reads through these views. They belong to the owner role,
-- which row-level security does not apply to, and each restricts itself to
-- the transaction's tenant exactly as the policies do (no tenant set: no rows).
-- They are deliberately not security_barrier views, so the planner can push
-- the search and viewport conditions down into index scans. Writes still go
-- to the tables, under the policies.
CREATE VIEW tenant_notes AS
SELECT * FROM notes WHERE tenant_id = current_tenant_id();

-- Only what notes show and search; password hashes and emails stay out of it.
CREATE VIEW tenant_users AS
SELECT tenant_id, id, username, disabled_at, created_at FROM users WHERE tenant_id = current_tenant_id();

GRANT SELECT ON tenant_notes, tenant_users TO landmark_app;

-- Viewports are longitude/latitude rectangles. As geography, ST_MakeEnvelope
-- makes a polygon with great-circle edges: points on the lower edge of a
-- northern box fall outside it, a box wider than 180 degrees flips to the
-- other side of the globe, and boxes touching a pole or 180 degrees wide are
-- errors. Planar && on the same points as geometry has none of that, and this
-- index serves it (and the cluster grid).
CREATE INDEX notes_location_lnglat ON notes USING gist (tenant_id, (location::geometry));

-- 180 and -180 are one meridian, and PostGIS 3.3's geography KNN breaks on the
-- second spelling: ORDER BY location <-> point fails with "index returned tuples
-- in wrong order" when one point sits at exactly -180 and the other on or just
-- across the antimeridian (180 has no such trouble). So every note keeps 180,
-- whoever writes it (the API, imports, benchmarks); the service maps a query
-- point at -180 the same way.
CREATE FUNCTION notes_antimeridian_as_180() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF ST_X(NEW.location::geometry) = -180 THEN
        NEW.location := ST_SetSRID(ST_MakePoint(180, ST_Y(NEW.location::geometry)), 4326)::geography;
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER notes_antimeridian_as_180 BEFORE INSERT OR UPDATE OF location ON notes
FOR EACH ROW EXECUTE FUNCTION notes_antimeridian_as_180();
UPDATE notes SET location = location WHERE ST_X(location::geometry) = -180;
