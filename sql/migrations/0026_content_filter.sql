-- A tenant's word list (issue 34): note bodies, place names and usernames holding one of
-- the words are refused (422 content_refused) or held for a moderator, as the tenant
-- chooses. The service compares skeletons (Shared/ContentFilter.swift): case, diacritics,
-- compatibility forms, invisible characters, look-alikes and digit swaps folded.
ALTER TABLE tenants ADD COLUMN filter_words text[] NOT NULL DEFAULT '{}'
    CONSTRAINT tenants_filter_words CHECK (cardinality(filter_words) <= 10000 AND array_position(filter_words, NULL) IS NULL);
ALTER TABLE tenants ADD COLUMN filter_action text NOT NULL DEFAULT 'refuse'
    CONSTRAINT tenants_filter_action CHECK (filter_action IN ('refuse', 'hold'));

CREATE OR REPLACE FUNCTION admin.set_tenant_setting(p_slug text, p_setting text, p_value text) RETURNS tenants
LANGUAGE plpgsql AS $$
DECLARE result tenants; origins text[];
BEGIN
    IF p_setting = 'min_password_length' THEN
        UPDATE tenants SET min_password_length = p_value::integer WHERE slug = p_slug RETURNING * INTO result;
    ELSIF p_setting = 'guests_enabled' THEN
        UPDATE tenants SET guests_enabled = p_value::boolean WHERE slug = p_slug RETURNING * INTO result;
    ELSIF p_setting = 'report_threshold' THEN
        UPDATE tenants SET report_threshold = p_value::integer WHERE slug = p_slug RETURNING * INTO result;
    ELSIF p_setting = 'filter_words' THEN
        -- Comma-separated, each trimmed, blank ones and repeats dropped; empty for none.
        UPDATE tenants SET filter_words = coalesce((
            SELECT array_agg(DISTINCT w ORDER BY w) FROM (SELECT btrim(x) AS w FROM unnest(string_to_array(p_value, ',')) x) s
            WHERE w <> ''), '{}')
        WHERE slug = p_slug RETURNING * INTO result;
    ELSIF p_setting = 'filter_action' THEN
        UPDATE tenants SET filter_action = p_value WHERE slug = p_slug RETURNING * INTO result;
    ELSIF p_setting = 'allowed_origins' THEN
        -- Trimmed, lowercased, without a trailing slash or a default port (browsers send
        -- neither), each once.
        SELECT coalesce(array_agg(DISTINCT o ORDER BY o), '{}') INTO origins
        FROM (SELECT regexp_replace(regexp_replace(rtrim(lower(btrim(x)), '/'), '^(https://.*):443$', '\1'),
                                    '^(http://.*):80$', '\1') AS o
              FROM unnest(string_to_array(p_value, ',')) AS x) s
        WHERE o <> '';
        IF NOT valid_web_origins(origins) THEN
            RAISE EXCEPTION 'allowed_origins must be origins like https://app.example.com or http://localhost:3000, comma-separated, not %', p_value
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
        UPDATE tenants SET allowed_origins = origins WHERE slug = p_slug RETURNING * INTO result;
    ELSE
        RAISE EXCEPTION 'unknown tenant setting %; known: min_password_length, guests_enabled, allowed_origins, report_threshold, filter_words, filter_action', p_setting
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF NOT FOUND THEN RAISE EXCEPTION 'no tenant with slug %', p_slug USING ERRCODE = 'no_data_found'; END IF;
    RETURN result;
END $$;
