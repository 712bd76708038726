-- Foundation: extensions, the admin schema, and the tenant helper that every
-- row-level security policy uses.
--
-- PostGIS is not a trusted extension: where the owner role is not a superuser,
-- a superuser creates it first (scripts/postgres.sh does), and IF NOT EXISTS
-- then finds it in place.
CREATE EXTENSION IF NOT EXISTS postgis;
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE EXTENSION IF NOT EXISTS btree_gist;
CREATE EXTENSION IF NOT EXISTS btree_gin;

-- The service connects as landmark_app. Creating the role needs CREATEROLE, so
-- operators (or scripts/postgres.sh) create it; this only checks it is there.
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'landmark_app') THEN
        RAISE EXCEPTION 'role landmark_app does not exist: create it first (see docs/operations.md)';
    END IF;
END $$;

-- The tenant of the current transaction, set by the service with
-- set_config('app.tenant_id', …, true). NULL when unset, so policies match no rows.
-- Plain SQL and STABLE, so the planner inlines it and indexes on tenant_id still serve.
CREATE FUNCTION current_tenant_id() RETURNS bigint
LANGUAGE sql STABLE PARALLEL SAFE
AS $$ SELECT nullif(current_setting('app.tenant_id', true), '')::bigint $$;

-- Operators' functions and views live here; the service never calls them.
CREATE SCHEMA admin;
REVOKE ALL ON SCHEMA admin FROM PUBLIC;

GRANT USAGE ON SCHEMA public TO landmark_app;
GRANT SELECT ON schema_migrations TO landmark_app;
