-- Sign in with Apple, Google and OpenID Connect providers; guests; accounts
-- without a password (issue 19). See docs/api.md "Signing in with an ID token".

-- An account may have no password: it signs in with an ID token, or is a guest.
ALTER TABLE users ALTER COLUMN password_hash DROP NOT NULL;
-- A guest: made by POST /v1/auth/guest with a generated name and nothing to sign in
-- with again; it stops being one when it links an identity or sets a password.
ALTER TABLE users ADD COLUMN guest boolean NOT NULL DEFAULT false;

-- Guests are on unless an operator switches them off (admin.set_tenant_setting).
ALTER TABLE tenants ADD COLUMN guests_enabled boolean NOT NULL DEFAULT true;

-- The identity providers a tenant accepts, with the client ids (OAuth audiences:
-- iOS bundle id, web/services id, Android client id) its apps use. 'apple' and
-- 'google' have their issuers and key URLs built into the service; an
-- 'oidc:<name>' provider names its own.
CREATE TABLE identity_providers (
    tenant_id bigint NOT NULL REFERENCES tenants (id),
    provider text NOT NULL CONSTRAINT identity_providers_name
        CHECK (provider IN ('apple', 'google') OR provider ~ '^oidc:[a-z0-9][a-z0-9-]{0,31}$'),
    client_ids text[] NOT NULL CONSTRAINT identity_providers_client_ids
        CHECK (cardinality(client_ids) BETWEEN 1 AND 20 AND array_position(client_ids, NULL) IS NULL),
    issuer text,
    jwks_uri text,
    -- What an ID token's nonce claim holds for the nonce a client sends: its SHA-256
    -- in hex ('hashed': Apple, Google's iOS SDK), the value itself ('raw': OpenID
    -- Connect's own rule, Google on the web), or either.
    nonce text NOT NULL DEFAULT 'hashed' CHECK (nonce IN ('hashed', 'raw', 'either')),
    -- Sign in with Apple's key (team id, key id, .p8 private key): signs the client
    -- secret that exchanges an authorization code and revokes tokens at Apple.
    apple_team_id text CHECK (apple_team_id ~ '^[A-Z0-9]{10}$'),
    apple_key_id text CHECK (apple_key_id ~ '^[A-Z0-9]{10}$'),
    apple_private_key text CHECK (apple_private_key LIKE '-----BEGIN PRIVATE KEY-----%'),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, provider),
    CONSTRAINT identity_providers_oidc_endpoints CHECK (
        CASE WHEN provider LIKE 'oidc:%'
             THEN issuer IS NOT NULL AND length(issuer) <= 500 AND jwks_uri IS NOT NULL AND length(jwks_uri) <= 500
             ELSE issuer IS NULL AND jwks_uri IS NULL END),
    -- https, or plain http to this machine only; the service refuses the latter too
    -- unless LR_IDENTITY_ALLOW_LOOPBACK is set (tests, the README's walkthrough).
    CONSTRAINT identity_providers_jwks_uri CHECK (
        jwks_uri ~ '^https://[^/@\s]+(/\S*)?$' OR jwks_uri ~ '^http://(127\.0\.0\.1|localhost|\[::1\])(:[0-9]{1,5})?(/\S*)?$'),
    CONSTRAINT identity_providers_apple_key CHECK (
        (apple_team_id IS NULL) = (apple_key_id IS NULL) AND (apple_key_id IS NULL) = (apple_private_key IS NULL)
        AND (apple_key_id IS NULL OR provider = 'apple'))
);

-- A user's sign-in identities: the provider's subject, never the email (emails
-- are unverified here, and linking on one would hand the account to whoever
-- registers that address at any provider). One per provider per user.
CREATE TABLE user_identities (
    tenant_id bigint NOT NULL,
    provider text NOT NULL,
    subject text NOT NULL CHECK (length(subject) BETWEEN 1 AND 255),
    user_id bigint NOT NULL,
    -- The audience the token was issued to: Apple's revoke call needs it.
    client_id text NOT NULL,
    -- What the provider said, shown in GET /v1/me; never used to find an account.
    email text CHECK (length(email) <= 320),
    -- Apple's refresh token, sealed with LR_DATA_KEY (AES-256-GCM), revoked at Apple
    -- when the identity or the account goes.
    apple_refresh_token bytea,
    created_at timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, provider, subject),
    CONSTRAINT user_identities_one_per_provider UNIQUE (tenant_id, user_id, provider),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
);

-- ID tokens already exchanged, by the SHA-256 of their signing input (header.payload:
-- the signature's encoding can vary, the signed part cannot), until five minutes after
-- they expire (IdentityStore.spend): a token is good once.
CREATE TABLE id_token_uses (
    tenant_id bigint NOT NULL REFERENCES tenants (id),
    token_hash bytea NOT NULL CHECK (length(token_hash) = 32),
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, token_hash)
);
CREATE INDEX id_token_uses_expires ON id_token_uses (expires_at);

-- Guest accounts made per client address per hour (fixed windows).
CREATE TABLE guest_signups (
    tenant_id bigint NOT NULL REFERENCES tenants (id),
    address text NOT NULL,
    window_start timestamptz NOT NULL,
    count integer NOT NULL,
    PRIMARY KEY (tenant_id, address, window_start)
);
CREATE INDEX guest_signups_window ON guest_signups (window_start);

ALTER TABLE identity_providers ENABLE ROW LEVEL SECURITY;
ALTER TABLE user_identities ENABLE ROW LEVEL SECURITY;
ALTER TABLE id_token_uses ENABLE ROW LEVEL SECURITY;
ALTER TABLE guest_signups ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON identity_providers USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
CREATE POLICY tenant_isolation ON user_identities USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
CREATE POLICY tenant_isolation ON id_token_uses USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
CREATE POLICY tenant_isolation ON guest_signups USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
-- The service reads providers; operators set them.
GRANT SELECT ON identity_providers TO landmark_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON user_identities, id_token_uses, guest_signups TO landmark_app;

-- ---------------------------------------------------------------------------
-- Retention: spent ID tokens once past the expiry they were stored with (five minutes
-- after the token's own, more than the clock skew allowed) and a minute more,
-- guest counts an hour after their window ended. Called by RetentionService
-- beside purge_expired(); admin.purge_expired() now includes both.
CREATE FUNCTION purge_sign_in_records(p_batch bigint DEFAULT 10000)
RETURNS TABLE (id_token_uses bigint, guest_signups bigint)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
BEGIN
    WITH doomed AS (
        SELECT u.tenant_id, u.token_hash FROM public.id_token_uses u
        WHERE u.expires_at < now() - interval '1 minute'
        LIMIT p_batch
    ), purged AS (
        DELETE FROM public.id_token_uses u USING doomed d
        WHERE u.tenant_id = d.tenant_id AND u.token_hash = d.token_hash RETURNING 1
    )
    SELECT count(*) INTO id_token_uses FROM purged;

    WITH doomed AS (
        SELECT g.tenant_id, g.address, g.window_start FROM public.guest_signups g
        WHERE g.window_start < now() - interval '2 hours'
        LIMIT p_batch
    ), purged AS (
        DELETE FROM public.guest_signups g USING doomed d
        WHERE g.tenant_id = d.tenant_id AND g.address = d.address AND g.window_start = d.window_start RETURNING 1
    )
    SELECT count(*) INTO guest_signups FROM purged;
    RETURN NEXT;
END $$;
REVOKE ALL ON FUNCTION purge_sign_in_records(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION purge_sign_in_records(bigint) TO landmark_app;

DROP FUNCTION admin.purge_expired();
CREATE FUNCTION admin.purge_expired()
RETURNS TABLE (sessions bigint, session_tokens bigint, login_failures bigint, login_addresses bigint,
               idempotency_keys bigint, id_token_uses bigint, guest_signups bigint, events bigint)
LANGUAGE plpgsql AS $$
DECLARE batch record; sign_in record;
BEGIN
    sessions := 0; session_tokens := 0; login_failures := 0; login_addresses := 0; idempotency_keys := 0;
    id_token_uses := 0; guest_signups := 0;
    LOOP
        SELECT p.* INTO batch FROM public.purge_expired(10000) AS p;
        SELECT p.* INTO sign_in FROM public.purge_sign_in_records(10000) AS p;
        sessions := sessions + batch.sessions;
        session_tokens := session_tokens + batch.session_tokens;
        login_failures := login_failures + batch.login_failures;
        login_addresses := login_addresses + batch.login_addresses;
        idempotency_keys := idempotency_keys + batch.idempotency_keys;
        id_token_uses := id_token_uses + sign_in.id_token_uses;
        guest_signups := guest_signups + sign_in.guest_signups;
        EXIT WHEN greatest(batch.sessions, batch.session_tokens, batch.login_failures, batch.login_addresses,
                           batch.idempotency_keys, sign_in.id_token_uses, sign_in.guest_signups) < 10000;
    END LOOP;
    events := public.purge_events();
    RETURN NEXT;
END $$;

-- ---------------------------------------------------------------------------
-- Operators' functions.

-- Accepts (or updates) a provider for a tenant. For 'apple' and 'google' leave
-- issuer and jwks_uri NULL; an 'oidc:<name>' provider needs both. p_nonce NULL
-- keeps the current setting (new: 'hashed' for apple, 'either' for google,
-- 'raw' for oidc providers).
CREATE FUNCTION admin.set_identity_provider(
    p_slug text, p_provider text, p_client_ids text[],
    p_issuer text DEFAULT NULL, p_jwks_uri text DEFAULT NULL, p_nonce text DEFAULT NULL
) RETURNS identity_providers
LANGUAGE plpgsql AS $$
DECLARE v_tenant bigint; result identity_providers;
BEGIN
    SELECT id INTO v_tenant FROM tenants WHERE slug = p_slug;
    IF v_tenant IS NULL THEN RAISE EXCEPTION 'no tenant with slug %', p_slug USING ERRCODE = 'no_data_found'; END IF;
    INSERT INTO identity_providers AS p (tenant_id, provider, client_ids, issuer, jwks_uri, nonce)
    VALUES (v_tenant, p_provider, p_client_ids, p_issuer, p_jwks_uri,
            coalesce(p_nonce, CASE WHEN p_provider = 'apple' THEN 'hashed' WHEN p_provider = 'google' THEN 'either' ELSE 'raw' END))
    ON CONFLICT (tenant_id, provider) DO UPDATE
    SET client_ids = excluded.client_ids, issuer = excluded.issuer, jwks_uri = excluded.jwks_uri,
        nonce = coalesce(p_nonce, p.nonce), updated_at = now()
    RETURNING * INTO result;
    RETURN result;
END $$;

-- Sign in with Apple's key for a tenant (the provider must be set first); NULLs remove it.
CREATE FUNCTION admin.set_apple_sign_in_key(p_slug text, p_team_id text, p_key_id text, p_private_key text)
RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE identity_providers p SET apple_team_id = p_team_id, apple_key_id = p_key_id,
        apple_private_key = p_private_key, updated_at = now()
    FROM tenants t WHERE t.slug = p_slug AND p.tenant_id = t.id AND p.provider = 'apple';
    RETURN FOUND;
END $$;

-- Stops accepting a provider. Identities linked to it stay (the user keeps them
-- if it comes back) but cannot sign in meanwhile.
CREATE FUNCTION admin.remove_identity_provider(p_slug text, p_provider text) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM identity_providers p USING tenants t WHERE t.slug = p_slug AND p.tenant_id = t.id AND p.provider = p_provider;
    RETURN FOUND;
END $$;

CREATE OR REPLACE FUNCTION admin.set_tenant_setting(p_slug text, p_setting text, p_value text) RETURNS tenants
LANGUAGE plpgsql AS $$
DECLARE result tenants;
BEGIN
    IF p_setting = 'min_password_length' THEN
        UPDATE tenants SET min_password_length = p_value::integer WHERE slug = p_slug RETURNING * INTO result;
    ELSIF p_setting = 'guests_enabled' THEN
        UPDATE tenants SET guests_enabled = p_value::boolean WHERE slug = p_slug RETURNING * INTO result;
    ELSE
        RAISE EXCEPTION 'unknown tenant setting %; known: min_password_length, guests_enabled', p_setting
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF NOT FOUND THEN RAISE EXCEPTION 'no tenant with slug %', p_slug USING ERRCODE = 'no_data_found'; END IF;
    RETURN result;
END $$;

CREATE VIEW admin.identity_providers AS
SELECT t.slug AS tenant, p.provider, p.client_ids, p.issuer, p.jwks_uri, p.nonce,
       p.apple_key_id IS NOT NULL AS apple_key_set, p.updated_at,
       (SELECT count(*) FROM user_identities i WHERE i.tenant_id = p.tenant_id AND i.provider = p.provider) AS identities
FROM identity_providers p JOIN tenants t ON t.id = p.tenant_id;
