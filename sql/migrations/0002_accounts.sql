-- Tenants, users, sessions and login throttling.
--
-- Every tenant table has tenant_id first in its primary key and in every
-- foreign key (the Citus distribution column), and row-level security that
-- shows the service only the rows of the tenant its transaction set.

CREATE TABLE tenants (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    slug text NOT NULL CONSTRAINT tenants_slug_key UNIQUE
        CONSTRAINT tenants_slug_format CHECK (slug ~ '^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$'),
    name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    -- NIST SP 800-63B-4 asks 15 where a password is the only factor; 8 is the API's default.
    min_password_length integer NOT NULL DEFAULT 8 CHECK (min_password_length BETWEEN 8 AND 128),
    disabled_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE users (
    tenant_id bigint NOT NULL REFERENCES tenants (id),
    id bigint GENERATED ALWAYS AS IDENTITY,
    username text NOT NULL CHECK (username ~ '^[A-Za-z0-9._-]{3,32}$'),
    email text CHECK (length(email) <= 254),
    password_hash text NOT NULL,
    disabled_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id)
);
-- Unique per tenant ignoring case; the names are what the service maps to 409s.
CREATE UNIQUE INDEX users_username_key ON users (tenant_id, lower(username));
CREATE UNIQUE INDEX users_email_key ON users (tenant_id, lower(email)) WHERE email IS NOT NULL;

CREATE TABLE sessions (
    tenant_id bigint NOT NULL,
    id bigint GENERATED ALWAYS AS IDENTITY,
    user_id bigint NOT NULL,
    user_agent text,
    created_at timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz NOT NULL DEFAULT now(),
    -- The session ends when its refresh chain would; refreshing extends it.
    expires_at timestamptz NOT NULL,
    revoked_at timestamptz,
    revoked_reason text,
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX sessions_user ON sessions (tenant_id, user_id) WHERE revoked_at IS NULL;

-- Only SHA-256 hashes of tokens are stored. A refresh token is retired when
-- used; presenting a retired one within the grace window gets a fresh pair,
-- later it is reuse and ends the session.
CREATE TABLE session_tokens (
    tenant_id bigint NOT NULL,
    token_hash bytea NOT NULL CHECK (length(token_hash) = 32),
    session_id bigint NOT NULL,
    kind text NOT NULL CHECK (kind IN ('access', 'refresh')),
    expires_at timestamptz NOT NULL,
    retired_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, token_hash),
    FOREIGN KEY (tenant_id, session_id) REFERENCES sessions (tenant_id, id) ON DELETE CASCADE
);
-- Access tokens arrive without a tenant, so they are found by hash alone.
CREATE UNIQUE INDEX session_tokens_hash ON session_tokens (token_hash);
CREATE INDEX session_tokens_session ON session_tokens (tenant_id, session_id);

-- Failed logins, per tenant and key ('user:<lower(username)>' or 'addr:<ip>').
CREATE TABLE login_failures (
    tenant_id bigint NOT NULL REFERENCES tenants (id),
    key text NOT NULL,
    failures integer NOT NULL DEFAULT 0,
    first_failure_at timestamptz NOT NULL DEFAULT now(),
    blocked_until timestamptz,
    PRIMARY KEY (tenant_id, key)
);

-- Row-level security: the service's role sees only the current tenant's rows.
ALTER TABLE users ENABLE ROW LEVEL SECURITY;
ALTER TABLE sessions ENABLE ROW LEVEL SECURITY;
ALTER TABLE session_tokens ENABLE ROW LEVEL SECURITY;
ALTER TABLE login_failures ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON users USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
CREATE POLICY tenant_isolation ON sessions USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
CREATE POLICY tenant_isolation ON session_tokens USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
CREATE POLICY tenant_isolation ON login_failures USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());

GRANT SELECT ON tenants TO landmark_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON users, sessions, session_tokens, login_failures TO landmark_app;

-- Resolves an access token before any tenant is known. SECURITY DEFINER runs it
-- as the owner, past row-level security, but it answers only for the exact
-- hash given and only for live tokens of active users and tenants.
CREATE FUNCTION authenticate_access_token(p_token_hash bytea)
RETURNS TABLE (tenant_id bigint, tenant_slug text, user_id bigint, username text, session_id bigint)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
    SELECT s.tenant_id, t.slug, u.id, u.username, s.id
    FROM session_tokens tok
    JOIN sessions s ON s.tenant_id = tok.tenant_id AND s.id = tok.session_id
    JOIN users u ON u.tenant_id = s.tenant_id AND u.id = s.user_id
    JOIN tenants t ON t.id = s.tenant_id
    WHERE tok.token_hash = p_token_hash
      AND tok.kind = 'access'
      AND tok.expires_at > now()
      AND s.revoked_at IS NULL
      AND u.disabled_at IS NULL
      AND t.disabled_at IS NULL
$$;
REVOKE ALL ON FUNCTION authenticate_access_token(bytea) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION authenticate_access_token(bytea) TO landmark_app;

-- ---------------------------------------------------------------------------
-- Operators' functions (psql as the owner role). See docs/operations.md.
-- ---------------------------------------------------------------------------

CREATE FUNCTION admin.create_tenant(p_slug text, p_name text) RETURNS tenants
LANGUAGE sql AS $$
    INSERT INTO tenants (slug, name) VALUES (p_slug, p_name) RETURNING *
$$;

CREATE FUNCTION admin.rename_tenant(p_slug text, p_name text) RETURNS tenants
LANGUAGE plpgsql AS $$
DECLARE result tenants;
BEGIN
    UPDATE tenants SET name = p_name WHERE slug = p_slug RETURNING * INTO result;
    IF NOT FOUND THEN RAISE EXCEPTION 'no tenant with slug %', p_slug USING ERRCODE = 'no_data_found'; END IF;
    RETURN result;
END $$;

-- Disabling a tenant refuses its logins and tokens at once; enabling restores them.
CREATE FUNCTION admin.set_tenant_disabled(p_slug text, p_disabled boolean) RETURNS tenants
LANGUAGE plpgsql AS $$
DECLARE result tenants;
BEGIN
    UPDATE tenants SET disabled_at = CASE WHEN p_disabled THEN coalesce(disabled_at, now()) END
    WHERE slug = p_slug RETURNING * INTO result;
    IF NOT FOUND THEN RAISE EXCEPTION 'no tenant with slug %', p_slug USING ERRCODE = 'no_data_found'; END IF;
    RETURN result;
END $$;

-- Settings are columns, so each has a type and a check; this names the allowed ones.
CREATE FUNCTION admin.set_tenant_setting(p_slug text, p_setting text, p_value text) RETURNS tenants
LANGUAGE plpgsql AS $$
DECLARE result tenants;
BEGIN
    IF p_setting = 'min_password_length' THEN
        UPDATE tenants SET min_password_length = p_value::integer WHERE slug = p_slug RETURNING * INTO result;
    ELSE
        RAISE EXCEPTION 'unknown tenant setting %; known: min_password_length', p_setting USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF NOT FOUND THEN RAISE EXCEPTION 'no tenant with slug %', p_slug USING ERRCODE = 'no_data_found'; END IF;
    RETURN result;
END $$;

-- Disabling a user ends their sessions too.
CREATE FUNCTION admin.set_user_disabled(p_slug text, p_username text, p_disabled boolean) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE v_tenant bigint; v_user bigint;
BEGIN
    SELECT id INTO v_tenant FROM tenants WHERE slug = p_slug;
    UPDATE users SET disabled_at = CASE WHEN p_disabled THEN coalesce(disabled_at, now()) END
    WHERE tenant_id = v_tenant AND lower(username) = lower(p_username) RETURNING id INTO v_user;
    IF v_user IS NULL THEN RETURN false; END IF;
    IF p_disabled THEN PERFORM admin.end_user_sessions(p_slug, p_username); END IF;
    RETURN true;
END $$;

CREATE FUNCTION admin.end_user_sessions(p_slug text, p_username text) RETURNS integer
LANGUAGE sql AS $$
    WITH ended AS (
        UPDATE sessions s SET revoked_at = now(), revoked_reason = 'operator'
        FROM users u, tenants t
        WHERE t.slug = p_slug AND u.tenant_id = t.id AND lower(u.username) = lower(p_username)
          AND s.tenant_id = u.tenant_id AND s.user_id = u.id AND s.revoked_at IS NULL
        RETURNING 1
    )
    SELECT count(*)::integer FROM ended
$$;

CREATE VIEW admin.tenant_overview AS
SELECT t.slug, t.name, t.disabled_at IS NOT NULL AS disabled, t.min_password_length, t.created_at,
       (SELECT count(*) FROM users u WHERE u.tenant_id = t.id) AS users,
       (SELECT count(*) FROM sessions s WHERE s.tenant_id = t.id AND s.revoked_at IS NULL AND s.expires_at > now()) AS active_sessions,
       (SELECT max(s.last_used_at) FROM sessions s WHERE s.tenant_id = t.id) AS last_activity
FROM tenants t;
