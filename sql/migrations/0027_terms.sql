-- Terms and contact (issue 34). App Store Review Guideline 1.2 asks apps with user content
-- for published contact information, and many tenants want their users to accept terms of
-- use before posting. GET /v1/tenant publishes a tenant's facts to its apps without a
-- sign-in; with terms_required, a user must accept the current terms_version
-- (POST /v1/me/terms) before writing notes or places (403 terms_not_accepted).
-- One subcommand per statement: Citus takes no other beside an ADD CONSTRAINT (tenants is a
-- reference table there).
ALTER TABLE tenants ADD COLUMN terms_url text CONSTRAINT tenants_terms_url CHECK (char_length(terms_url) <= 2000);
ALTER TABLE tenants ADD COLUMN terms_version text CONSTRAINT tenants_terms_version CHECK (char_length(terms_version) BETWEEN 1 AND 100);
ALTER TABLE tenants ADD COLUMN terms_required boolean NOT NULL DEFAULT false;
ALTER TABLE tenants ADD COLUMN contact_url text CONSTRAINT tenants_contact_url CHECK (char_length(contact_url) <= 2000);
ALTER TABLE tenants ADD COLUMN contact_email text CONSTRAINT tenants_contact_email CHECK (char_length(contact_email) BETWEEN 3 AND 254);
-- Terms cannot be required without a version to accept.
ALTER TABLE tenants ADD CONSTRAINT tenants_terms_required CHECK (NOT terms_required OR terms_version IS NOT NULL);

-- The version of the tenant's terms the user accepted, and when.
ALTER TABLE users ADD COLUMN terms_version text;
ALTER TABLE users ADD COLUMN terms_accepted_at timestamptz;

-- admin.set_tenant_setting (0012) with the safety kit's settings (0024 to 0027), by kind,
-- so that a later setting is a name in a list rather than another copy of the function.
CREATE OR REPLACE FUNCTION admin.set_tenant_setting(p_slug text, p_setting text, p_value text) RETURNS tenants
LANGUAGE plpgsql AS $$
DECLARE result tenants; origins text[];
BEGIN
    IF p_setting IN ('min_password_length', 'report_threshold') THEN
        EXECUTE format('UPDATE tenants SET %I = $1::integer WHERE slug = $2 RETURNING *', p_setting)
            INTO result USING p_value, p_slug;
    ELSIF p_setting IN ('guests_enabled', 'terms_required') THEN
        EXECUTE format('UPDATE tenants SET %I = $1::boolean WHERE slug = $2 RETURNING *', p_setting)
            INTO result USING p_value, p_slug;
    ELSIF p_setting IN ('terms_version', 'contact_email', 'filter_action') THEN
        -- Trimmed; empty for none.
        EXECUTE format('UPDATE tenants SET %I = $1 WHERE slug = $2 RETURNING *', p_setting)
            INTO result USING nullif(btrim(p_value), ''), p_slug;
    ELSIF p_setting IN ('terms_url', 'contact_url') THEN
        IF p_value <> '' AND p_value !~ '^https?://[^[:space:]]+$' THEN
            RAISE EXCEPTION '% must be an http(s) URL, or empty for none, not %', p_setting, p_value
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
        EXECUTE format('UPDATE tenants SET %I = $1 WHERE slug = $2 RETURNING *', p_setting)
            INTO result USING nullif(p_value, ''), p_slug;
    ELSIF p_setting = 'filter_words' THEN
        -- Comma-separated, each trimmed, blank ones and repeats dropped; empty for none.
        UPDATE tenants SET filter_words = coalesce((
            SELECT array_agg(DISTINCT w ORDER BY w) FROM (SELECT btrim(x) AS w FROM unnest(string_to_array(p_value, ',')) x) s
            WHERE w <> ''), '{}')
        WHERE slug = p_slug RETURNING * INTO result;
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
        RAISE EXCEPTION 'unknown tenant setting %; known: min_password_length, guests_enabled, allowed_origins, report_threshold, filter_words, filter_action, terms_url, terms_version, terms_required, contact_url, contact_email', p_setting
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF result.id IS NULL THEN RAISE EXCEPTION 'no tenant with slug %', p_slug USING ERRCODE = 'no_data_found'; END IF;
    RETURN result;
END $$;
