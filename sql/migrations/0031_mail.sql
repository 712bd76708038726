-- Accounts people can recover (issue 35): verified emails, password reset by code or link,
-- and the mail that carries them, through an outbox.
--
-- A message is written to mail_outbox in the transaction that makes the code it carries, so
-- there is never a code without its message or a message for a code that was rolled back. A
-- sender on every replica delivers it: per tenant, one sender at a time holds the tenant's
-- queue (mail_queues), so its mail leaves in order, and a relay that cannot be reached stops the
-- queue (blocked_until) rather than reordering it. Delivery is at least once: a sender that
-- dies after the relay's 250 and before recording it leaves the message to be sent again by the
-- next holder, with the same Message-ID (SMTP itself has the same gap, RFC 1047).

-- The tenant's mail: its relay and sender, and the lifetimes of what it mails. One subcommand
-- per statement: Citus takes no other beside an ADD CONSTRAINT (tenants is a reference table).
ALTER TABLE tenants ADD COLUMN mail_smtp_url text CONSTRAINT tenants_mail_smtp_url CHECK (mail_smtp_url ~ '^smtps?://[^[:space:]/@?#]+/?$');
ALTER TABLE tenants ADD COLUMN mail_smtp_username text CONSTRAINT tenants_mail_smtp_username CHECK (char_length(mail_smtp_username) BETWEEN 1 AND 320);
-- Readable by the service's role only, as the Sign in with Apple key is.
ALTER TABLE tenants ADD COLUMN mail_smtp_password text CONSTRAINT tenants_mail_smtp_password CHECK (char_length(mail_smtp_password) BETWEEN 1 AND 1000);
ALTER TABLE tenants ADD COLUMN mail_smtp_auth text NOT NULL DEFAULT 'PLAIN' CONSTRAINT tenants_mail_smtp_auth CHECK (mail_smtp_auth IN ('PLAIN', 'LOGIN'));
ALTER TABLE tenants ADD COLUMN mail_from_address text CONSTRAINT tenants_mail_from_address CHECK (mail_from_address ~ '^[!#-''*+\-/-9=?A-Z^-~.]+@[A-Za-z0-9.-]+\.[A-Za-z0-9-]+$' AND char_length(mail_from_address) <= 254);
ALTER TABLE tenants ADD COLUMN mail_from_name text CONSTRAINT tenants_mail_from_name CHECK (char_length(mail_from_name) BETWEEN 1 AND 100);
ALTER TABLE tenants ADD CONSTRAINT tenants_mail_complete CHECK (
    (mail_smtp_url IS NULL) = (mail_smtp_username IS NULL) AND (mail_smtp_url IS NULL) = (mail_smtp_password IS NULL)
    AND (mail_smtp_url IS NULL) = (mail_from_address IS NULL));
-- Where links in mail point: the tenant's web address, which serves /t/{slug}/links/… (the
-- service's web app, or nginx in front of it). Never taken from a request's Host header.
ALTER TABLE tenants ADD COLUMN link_base_url text CONSTRAINT tenants_link_base_url CHECK (link_base_url ~ '^https?://[^[:space:]/?#]+$');
ALTER TABLE tenants ADD COLUMN email_verification_required boolean NOT NULL DEFAULT false;
ALTER TABLE tenants ADD COLUMN code_minutes integer NOT NULL DEFAULT 15 CONSTRAINT tenants_code_minutes CHECK (code_minutes BETWEEN 5 AND 60);
ALTER TABLE tenants ADD COLUMN reset_link_minutes integer NOT NULL DEFAULT 30 CONSTRAINT tenants_reset_link_minutes CHECK (reset_link_minutes BETWEEN 5 AND 1440);
ALTER TABLE tenants ADD COLUMN verification_link_minutes integer NOT NULL DEFAULT 1440 CONSTRAINT tenants_verification_link_minutes CHECK (verification_link_minutes BETWEEN 15 AND 10080);
-- The tenant's iOS apps (`TEAMID.bundle.id`), for /.well-known/apple-app-site-association.
ALTER TABLE tenants ADD COLUMN ios_app_ids text[] NOT NULL DEFAULT '{}' CONSTRAINT tenants_ios_app_ids CHECK (cardinality(ios_app_ids) <= 10);

-- When the user proved they read `email` (a code or link from it, or a reset through it).
ALTER TABLE users ADD COLUMN email_verified_at timestamptz;

-- A changed email (not only its case) is not verified: whatever changes it, unless the same
-- statement verifies it.
CREATE FUNCTION users_email_unverified_on_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF lower(NEW.email) IS DISTINCT FROM lower(OLD.email) AND NEW.email_verified_at IS NOT DISTINCT FROM OLD.email_verified_at THEN
        NEW.email_verified_at := NULL;
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER users_email_unverified_on_change BEFORE UPDATE OF email ON users
    FOR EACH ROW EXECUTE FUNCTION users_email_unverified_on_change();

-- One code and link sent for one purpose to one address: a 6-digit code (HMAC-SHA-256 under
-- the service's data key: a plain hash of a million values protects nothing) and a link token
-- (SHA-256, as session tokens). A new one for the same user and purpose ends the older ones.
CREATE TABLE account_codes (
    tenant_id bigint NOT NULL,
    id bigint GENERATED ALWAYS AS IDENTITY,
    user_id bigint NOT NULL,
    purpose text NOT NULL CHECK (purpose IN ('verify_email', 'reset_password')),
    -- The address it went to: for verify_email, the address it verifies (a new one while an
    -- email change waits for it).
    email text NOT NULL CHECK (char_length(email) <= 254),
    code_hmac bytea NOT NULL CHECK (length(code_hmac) = 32),
    link_hash bytea NOT NULL CHECK (length(link_hash) = 32),
    code_expires_at timestamptz NOT NULL,
    link_expires_at timestamptz NOT NULL,
    failures integer NOT NULL DEFAULT 0,
    ended_at timestamptz,
    ended_reason text CHECK (ended_reason IN ('used', 'replaced', 'failures', 'account')),
    created_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, id)
);
SELECT admin.distribute_new_table('account_codes');
ALTER TABLE account_codes ADD FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE;
CREATE UNIQUE INDEX account_codes_link ON account_codes (tenant_id, link_hash);
CREATE INDEX account_codes_live ON account_codes (tenant_id, user_id, purpose) WHERE ended_at IS NULL;
ALTER TABLE account_codes ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON account_codes USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
GRANT SELECT, INSERT, UPDATE ON account_codes TO landmark_app;

-- The messages. The body carries a live code, so it is sealed (the service's data key, bound
-- to the row) and dropped once the message is final.
CREATE TABLE mail_outbox (
    tenant_id bigint NOT NULL,
    id bigint GENERATED ALWAYS AS IDENTITY,
    user_id bigint,
    kind text NOT NULL CHECK (kind IN ('verify_email', 'email_change_notice', 'password_reset', 'password_changed_notice')),
    recipient text NOT NULL CHECK (char_length(recipient) <= 254),
    -- Fixed when the message is made: every copy a retry sends is the same message.
    message_id text NOT NULL,
    payload_sealed bytea,
    -- The code's end: a message still unsent then is dropped, never sent dead.
    not_after timestamptz NOT NULL,
    state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'failed', 'expired', 'suppressed', 'replaced')),
    -- Each attempt's number: only the sender that made attempt n may record its outcome.
    attempts integer NOT NULL DEFAULT 0,
    -- The message's own refusals (4xx), which space its retries; a relay that is down is not one.
    failures integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL,
    last_smtp_code integer,
    last_error text,
    created_at timestamptz NOT NULL,
    finished_at timestamptz,
    PRIMARY KEY (tenant_id, id)
);
SELECT admin.distribute_new_table('mail_outbox');
CREATE INDEX mail_outbox_pending ON mail_outbox (tenant_id, id) WHERE state = 'pending';
CREATE INDEX mail_outbox_due ON mail_outbox (next_attempt_at) WHERE state = 'pending';
ALTER TABLE mail_outbox ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON mail_outbox USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
GRANT SELECT, INSERT, UPDATE ON mail_outbox TO landmark_app;

-- Per tenant: which sender holds its queue until when, and the relay's breaker.
CREATE TABLE mail_queues (
    tenant_id bigint NOT NULL PRIMARY KEY,
    held_by text,
    held_until timestamptz,
    blocked_until timestamptz,
    relay_failures integer NOT NULL DEFAULT 0,
    last_error text
);
SELECT admin.distribute_new_table('mail_queues');
ALTER TABLE mail_queues ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON mail_queues USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
GRANT SELECT, INSERT, UPDATE ON mail_queues TO landmark_app;

-- Addresses the relay refused for good at RCPT: mail to them is not tried again.
CREATE TABLE mail_suppressions (
    tenant_id bigint NOT NULL,
    address text NOT NULL,      -- lower case
    smtp_code integer,
    detail text,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, address)
);
SELECT admin.distribute_new_table('mail_suppressions');
ALTER TABLE mail_suppressions ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON mail_suppressions USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
GRANT SELECT, INSERT, UPDATE, DELETE ON mail_suppressions TO landmark_app;

-- Counters of fixed windows for the sending limits (per recipient, per client address),
-- counted with one upsert each, so that parallel requests cannot both pass the last slot.
CREATE TABLE mail_limits (
    tenant_id bigint NOT NULL,
    key text NOT NULL CHECK (char_length(key) <= 300),
    window_start timestamptz NOT NULL,
    count integer NOT NULL,
    PRIMARY KEY (tenant_id, key, window_start)
);
SELECT admin.distribute_new_table('mail_limits');
ALTER TABLE mail_limits ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON mail_limits USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
GRANT SELECT, INSERT, UPDATE, DELETE ON mail_limits TO landmark_app;

-- The tenants with mail due, for the senders, which then work tenant by tenant (on Citus a
-- claim with FOR UPDATE must stay in one tenant's shard).
CREATE FUNCTION mail_due_tenants(p_now timestamptz) RETURNS SETOF bigint
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public, pg_temp
AS $$
BEGIN
    RETURN QUERY SELECT DISTINCT tenant_id FROM mail_outbox WHERE state = 'pending' AND next_attempt_at <= p_now;
END $$;
REVOKE ALL ON FUNCTION mail_due_tenants(timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mail_due_tenants(timestamptz) TO landmark_app;

-- Operators set a tenant's relay with psql (or `landmark-remark tenant mail`); NULLs clear it.
CREATE FUNCTION admin.set_tenant_mail(
    p_slug text, p_smtp_url text, p_username text, p_password text, p_from_address text,
    p_from_name text DEFAULT NULL, p_auth text DEFAULT 'PLAIN') RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE tenants SET mail_smtp_url = p_smtp_url, mail_smtp_username = p_username, mail_smtp_password = p_password,
        mail_from_address = p_from_address, mail_from_name = nullif(btrim(p_from_name), ''), mail_smtp_auth = upper(p_auth)
    WHERE slug = p_slug;
    IF NOT FOUND THEN RAISE EXCEPTION 'no tenant with slug %', p_slug USING ERRCODE = 'no_data_found'; END IF;
END $$;

-- admin.set_tenant_setting (0027) with this issue's settings.
CREATE OR REPLACE FUNCTION admin.set_tenant_setting(p_slug text, p_setting text, p_value text) RETURNS tenants
LANGUAGE plpgsql AS $$
DECLARE result tenants; origins text[]; apps text[];
BEGIN
    IF p_setting IN ('min_password_length', 'report_threshold', 'code_minutes', 'reset_link_minutes', 'verification_link_minutes') THEN
        EXECUTE format('UPDATE tenants SET %I = $1::integer WHERE slug = $2 RETURNING *', p_setting)
            INTO result USING p_value, p_slug;
    ELSIF p_setting IN ('guests_enabled', 'terms_required', 'email_verification_required') THEN
        EXECUTE format('UPDATE tenants SET %I = $1::boolean WHERE slug = $2 RETURNING *', p_setting)
            INTO result USING p_value, p_slug;
    ELSIF p_setting IN ('terms_version', 'contact_email', 'filter_action') THEN
        -- Trimmed; empty for none.
        EXECUTE format('UPDATE tenants SET %I = $1 WHERE slug = $2 RETURNING *', p_setting)
            INTO result USING nullif(btrim(p_value), ''), p_slug;
    ELSIF p_setting IN ('terms_url', 'contact_url', 'link_base_url') THEN
        IF p_value <> '' AND p_value !~ '^https?://[^[:space:]]+$' THEN
            RAISE EXCEPTION '% must be an http(s) URL, or empty for none, not %', p_setting, p_value
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
        EXECUTE format('UPDATE tenants SET %I = $1 WHERE slug = $2 RETURNING *', p_setting)
            INTO result USING nullif(CASE WHEN p_setting = 'link_base_url' THEN rtrim(p_value, '/') ELSE p_value END, ''), p_slug;
    ELSIF p_setting = 'filter_words' THEN
        -- Comma-separated, each trimmed, blank ones and repeats dropped; empty for none.
        UPDATE tenants SET filter_words = coalesce((
            SELECT array_agg(DISTINCT w ORDER BY w) FROM (SELECT btrim(x) AS w FROM unnest(string_to_array(p_value, ',')) x) s
            WHERE w <> ''), '{}')
        WHERE slug = p_slug RETURNING * INTO result;
    ELSIF p_setting = 'ios_app_ids' THEN
        -- Comma-separated `TEAMID.bundle.id`s; empty for none.
        SELECT coalesce(array_agg(DISTINCT a ORDER BY a), '{}') INTO apps
        FROM (SELECT btrim(x) AS a FROM unnest(string_to_array(p_value, ',')) x) s WHERE a <> '';
        IF EXISTS (SELECT FROM unnest(apps) a WHERE a !~ '^[A-Z0-9]{10}\.[A-Za-z0-9][A-Za-z0-9.-]{0,154}$') THEN
            RAISE EXCEPTION 'ios_app_ids must be app ids like ABCDE12345.com.example.app, comma-separated, not %', p_value
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
        UPDATE tenants SET ios_app_ids = apps WHERE slug = p_slug RETURNING * INTO result;
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
        RAISE EXCEPTION 'unknown tenant setting %; known: min_password_length, guests_enabled, allowed_origins, report_threshold, filter_words, filter_action, terms_url, terms_version, terms_required, contact_url, contact_email, link_base_url, email_verification_required, code_minutes, reset_link_minutes, verification_link_minutes, ios_app_ids', p_setting
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF result.id IS NULL THEN RAISE EXCEPTION 'no tenant with slug %', p_slug USING ERRCODE = 'no_data_found'; END IF;
    RETURN result;
END $$;

-- A tenant's own wording of a message, per language (BCP 47 primary tag: 'fr', 'ja'), with
-- placeholders {{tenant}}, {{username}}, {{code}}, {{link}}, {{minutes}} and {{email}}. A user's
-- message uses the first of their languages (the request's Accept-Language) the tenant has;
-- English is built in.
CREATE TABLE mail_templates (
    tenant_id bigint NOT NULL,
    kind text NOT NULL CHECK (kind IN ('verify_email', 'email_change_notice', 'password_reset', 'password_changed_notice')),
    language text NOT NULL CHECK (language ~ '^[a-z]{2,3}$'),
    subject text NOT NULL CHECK (char_length(subject) BETWEEN 1 AND 200),
    text_body text NOT NULL CHECK (char_length(text_body) BETWEEN 1 AND 20000),
    html_body text NOT NULL CHECK (char_length(html_body) BETWEEN 1 AND 100000),
    PRIMARY KEY (tenant_id, kind, language)
);
SELECT admin.distribute_new_table('mail_templates');
ALTER TABLE mail_templates ADD FOREIGN KEY (tenant_id) REFERENCES tenants (id);
ALTER TABLE mail_templates ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON mail_templates USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
GRANT SELECT ON mail_templates TO landmark_app;
