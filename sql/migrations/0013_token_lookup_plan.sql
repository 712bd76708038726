-- The access-token lookup, every authenticated request's first statement, with a plan
-- that is kept (issue 22). As a SECURITY DEFINER SQL function it could not be inlined,
-- and PostgreSQL 15 planned its query again on every call: ~0.45 ms of the ~0.5 ms it
-- took (pgbench, one client, a small database). PL/pgSQL keeps the plan of RETURN QUERY
-- for the session, so a pooled connection plans it once: ~0.04 ms. Same signature, same
-- rows, same rules (see 0002_accounts.sql).
CREATE OR REPLACE FUNCTION authenticate_access_token(p_token_hash bytea)
RETURNS TABLE (tenant_id bigint, tenant_slug text, user_id bigint, username text, session_id bigint)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
BEGIN
    RETURN QUERY
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
      AND t.disabled_at IS NULL;
END $$;
