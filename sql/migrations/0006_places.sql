-- Places: reads under row-level security, the antimeridian rule, and the
-- operators' import of default places.

-- Read through a tenant view for the same reason as notes (see 0004): the
-- trigram and GiST conditions are not LEAKPROOF, so under the policies the
-- planner could not use the indexes for name search or viewports.
CREATE VIEW tenant_places AS
SELECT * FROM places WHERE tenant_id = current_tenant_id();
GRANT SELECT ON tenant_places TO landmark_app;

-- Viewports as planar boxes, as for notes.
CREATE INDEX places_location_lnglat ON places USING gist (tenant_id, (location::geometry));

-- One spelling of the antimeridian, as for notes (the trigger function is generic).
CREATE TRIGGER places_antimeridian_as_180 BEFORE INSERT OR UPDATE OF location ON places
FOR EACH ROW EXECUTE FUNCTION notes_antimeridian_as_180();

-- Imported places are matched on re-import by their key: the row's "key" when
-- the file gives one, else its name ignoring case. Custom places have none.
ALTER TABLE places ADD COLUMN import_key text;
CREATE UNIQUE INDEX places_import_key ON places (tenant_id, import_key) WHERE import_key IS NOT NULL;

-- Imports a JSON array of {"name","lat","lng", "key"?, …} as the tenant's default
-- places, all or nothing. Every row is checked before anything is written; a bad
-- one stops the import with its index and field. Fields other than name, lat,
-- lng and key are kept in details. Re-importing the same file changes nothing;
-- a changed name (with a key), position or detail updates the place.
CREATE FUNCTION admin.import_places(p_slug text, p_places jsonb)
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
            SET name = excluded.name, location = excluded.location, details = excluded.details, updated_at = now()
            WHERE (p.name, p.details, ST_AsBinary(p.location)) IS DISTINCT FROM (excluded.name, excluded.details, ST_AsBinary(excluded.location))
        RETURNING xmax = 0 AS was_inserted
    )
    SELECT count(*) FILTER (WHERE was_inserted)::integer,
           count(*) FILTER (WHERE NOT was_inserted)::integer,
           ((SELECT count(*) FROM incoming) - count(*))::integer
    FROM written;
END $$;
