-- What browsers need (issue 21): event-stream tickets, because EventSource cannot
-- send an Authorization header, and the origins each tenant lets call the API
-- from other sites (CORS). See docs/api.md "Browsers".

-- Whether every element is an origin as browsers send it: scheme://host[:port],
-- lowercase, no path, no default port, a port that exists.
CREATE FUNCTION valid_web_origins(p_origins text[]) RETURNS boolean
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
    SELECT coalesce(bool_and(
        o ~ '^https?://([a-z0-9-]+\.)*[a-z0-9-]+(:[1-9][0-9]{0,4})?$'
        AND coalesce(substring(o FROM ':([0-9]+)$')::integer, 1) <= 65535
        AND o !~ '^https://.*:443$' AND o !~ '^http://.*:80$'), true)
    FROM unnest(p_origins) AS o
$$;

-- Origins whose pages may call the API for this tenant. Empty: none, the default.
-- Set with admin.set_tenant_setting; the service reads them all (TenantOrigins).
ALTER TABLE tenants ADD COLUMN allowed_origins text[] NOT NULL DEFAULT '{}'
    CONSTRAINT tenants_allowed_origins CHECK (
        cardinality(allowed_origins) <= 50 AND array_position(allowed_origins, NULL) IS NULL
        AND valid_web_origins(allowed_origins));

-- A stream ticket stands in for the access token it was made with, once, for a few
-- seconds (LR_EVENT_TICKET_TTL_SECONDS): GET /v1/events?ticket=… Stored by its
-- SHA-256; redeeming deletes it. The stream then lives as long as that access token.
CREATE TABLE stream_tickets (
    tenant_id bigint NOT NULL REFERENCES tenants (id),
    ticket_hash bytea NOT NULL CHECK (length(ticket_hash) = 32),
    access_token_hash bytea NOT NULL CHECK (length(access_token_hash) = 32),
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, ticket_hash)
);
-- Redemption knows only the ticket; creation counts a token's outstanding tickets.
CREATE UNIQUE INDEX stream_tickets_hash ON stream_tickets (ticket_hash);
CREATE INDEX stream_tickets_token ON stream_tickets (tenant_id, access_token_hash);
CREATE INDEX stream_tickets_expires ON stream_tickets (expires_at);
ALTER TABLE stream_tickets ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON stream_tickets USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
GRANT SELECT, INSERT, DELETE ON stream_tickets TO landmark_app;

-- Redeems a ticket before any tenant is known (like authenticate_access_token): the
-- ticket is deleted whatever happens next, so it works once; it answers only while
-- the ticket is fresh and the access token it stands for is still live.
CREATE FUNCTION redeem_stream_ticket(p_ticket_hash bytea)
RETURNS TABLE (tenant_id bigint, tenant_slug text, user_id bigint, username text, session_id bigint, access_token_hash bytea)
LANGUAGE sql VOLATILE SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
    WITH redeemed AS (
        DELETE FROM stream_tickets t WHERE t.ticket_hash = p_ticket_hash
        RETURNING t.access_token_hash, t.expires_at
    )
    SELECT a.tenant_id, a.tenant_slug, a.user_id, a.username, a.session_id, r.access_token_hash
    FROM redeemed r CROSS JOIN LATERAL authenticate_access_token(r.access_token_hash) a
    WHERE r.expires_at > now()
$$;
REVOKE ALL ON FUNCTION redeem_stream_ticket(bytea) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION redeem_stream_ticket(bytea) TO landmark_app;

-- ---------------------------------------------------------------------------
-- Retention: tickets a minute after they expire, beside the sign-in records.

DROP FUNCTION admin.purge_expired();
DROP FUNCTION purge_sign_in_records(bigint);
CREATE FUNCTION purge_sign_in_records(p_batch bigint DEFAULT 10000)
RETURNS TABLE (id_token_uses bigint, guest_signups bigint, stream_tickets bigint)
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

    WITH doomed AS (
        SELECT s.tenant_id, s.ticket_hash FROM public.stream_tickets s
        WHERE s.expires_at < now() - interval '1 minute'
        LIMIT p_batch
    ), purged AS (
        DELETE FROM public.stream_tickets s USING doomed d
        WHERE s.tenant_id = d.tenant_id AND s.ticket_hash = d.ticket_hash RETURNING 1
    )
    SELECT count(*) INTO stream_tickets FROM purged;
    RETURN NEXT;
END $$;
REVOKE ALL ON FUNCTION purge_sign_in_records(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION purge_sign_in_records(bigint) TO landmark_app;

CREATE FUNCTION admin.purge_expired()
RETURNS TABLE (sessions bigint, session_tokens bigint, login_failures bigint, login_addresses bigint,
               idempotency_keys bigint, id_token_uses bigint, guest_signups bigint, stream_tickets bigint, events bigint)
LANGUAGE plpgsql AS $$
DECLARE batch record; sign_in record;
BEGIN
    sessions := 0; session_tokens := 0; login_failures := 0; login_addresses := 0; idempotency_keys := 0;
    id_token_uses := 0; guest_signups := 0; stream_tickets := 0;
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
        stream_tickets := stream_tickets + sign_in.stream_tickets;
        EXIT WHEN greatest(batch.sessions, batch.session_tokens, batch.login_failures, batch.login_addresses,
                           batch.idempotency_keys, sign_in.id_token_uses, sign_in.guest_signups,
                           sign_in.stream_tickets) < 10000;
    END LOOP;
    events := public.purge_events();
    RETURN NEXT;
END $$;

-- ---------------------------------------------------------------------------
-- Operators' settings: allowed_origins takes a comma-separated list ('' for none).

CREATE OR REPLACE FUNCTION admin.set_tenant_setting(p_slug text, p_setting text, p_value text) RETURNS tenants
LANGUAGE plpgsql AS $$
DECLARE result tenants; origins text[];
BEGIN
    IF p_setting = 'min_password_length' THEN
        UPDATE tenants SET min_password_length = p_value::integer WHERE slug = p_slug RETURNING * INTO result;
    ELSIF p_setting = 'guests_enabled' THEN
        UPDATE tenants SET guests_enabled = p_value::boolean WHERE slug = p_slug RETURNING * INTO result;
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
        RAISE EXCEPTION 'unknown tenant setting %; known: min_password_length, guests_enabled, allowed_origins', p_setting
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF NOT FOUND THEN RAISE EXCEPTION 'no tenant with slug %', p_slug USING ERRCODE = 'no_data_found'; END IF;
    RETURN result;
END $$;
