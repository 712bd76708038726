-- Accounts under abuse (issue 17): login throttling that a stranger cannot turn
-- against an account's owner, retention of what only grew, and a disabled
-- user's notes out of every read.

-- ---------------------------------------------------------------------------
-- Login throttling (Sources/LandmarkRemark/Auth/LoginThrottle.swift).
--
-- login_failures now counts attempts, reserved before the password is hashed,
-- under three keys per attempt (0002's 'user:…' keys are no longer written):
--   'pair:<subject>@<address>'  one account (or unknown login) from one address
--   '<subject>'                 the account from everywhere: 'acct:<user id>',
--                               or 'login:<lower(login)>' when no account matches
--   'addr:<address>'            one address, whatever it tries
-- The account-wide key is not used from an address listed here: one that logged
-- in to that account within the last 30 days (LoginThrottle.knownAddressDays).
CREATE TABLE login_addresses (
    tenant_id bigint NOT NULL,
    user_id bigint NOT NULL,
    address text NOT NULL,
    last_login_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, user_id, address),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
);
ALTER TABLE login_addresses ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON login_addresses USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
GRANT SELECT, INSERT, UPDATE, DELETE ON login_addresses TO landmark_app;

-- ---------------------------------------------------------------------------
-- Retention. Each purge deletes at most p_batch rows per table, so one call is
-- a short transaction whatever the backlog; the service (RetentionService)
-- calls again while a table had more, operators call admin.purge_expired().
-- Every horizon lies past the point where the row could still change an
-- answer, so a purge never changes what the API says:
--   sessions        7 days after they expired or were revoked (a refresh of an
--                   expired or revoked session is refused without them); their
--                   tokens go with them (ON DELETE CASCADE)
--   session_tokens  7 days after their own expiry: an expired token, retired or
--                   not, matches nothing, so refresh-reuse detection (which needs
--                   the retired refresh token) is not weakened while it could apply
--   login_failures  an hour after the count's 15-minute window began, once no
--                   block is running: the next attempt would start afresh anyway
--   login_addresses 30 days after the last login from there
--   idempotency_keys 24 hours after they were claimed (API.md: a retry within
--                   24 hours replays; Idempotency.lifetimeHours)
CREATE INDEX session_tokens_expires ON session_tokens (expires_at);
CREATE INDEX login_failures_first ON login_failures (first_failure_at);
CREATE INDEX login_addresses_last ON login_addresses (last_login_at);

CREATE FUNCTION purge_expired(p_batch bigint DEFAULT 10000)
RETURNS TABLE (sessions bigint, session_tokens bigint, login_failures bigint, login_addresses bigint, idempotency_keys bigint)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
BEGIN
    WITH doomed AS (
        SELECT s.tenant_id, s.id FROM public.sessions s
        WHERE s.expires_at < now() - interval '7 days' OR s.revoked_at < now() - interval '7 days'
        LIMIT p_batch
    ), purged AS (
        DELETE FROM public.sessions s USING doomed d WHERE s.tenant_id = d.tenant_id AND s.id = d.id RETURNING 1
    )
    SELECT count(*) INTO sessions FROM purged;

    WITH doomed AS (
        SELECT t.tenant_id, t.token_hash FROM public.session_tokens t
        WHERE t.expires_at < now() - interval '7 days'
        LIMIT p_batch
    ), purged AS (
        DELETE FROM public.session_tokens t USING doomed d
        WHERE t.tenant_id = d.tenant_id AND t.token_hash = d.token_hash RETURNING 1
    )
    SELECT count(*) INTO session_tokens FROM purged;

    WITH doomed AS (
        SELECT f.tenant_id, f.key FROM public.login_failures f
        WHERE f.first_failure_at < now() - interval '1 hour' AND (f.blocked_until IS NULL OR f.blocked_until < now())
        LIMIT p_batch
    ), purged AS (
        DELETE FROM public.login_failures f USING doomed d WHERE f.tenant_id = d.tenant_id AND f.key = d.key RETURNING 1
    )
    SELECT count(*) INTO login_failures FROM purged;

    WITH doomed AS (
        SELECT a.tenant_id, a.user_id, a.address FROM public.login_addresses a
        WHERE a.last_login_at < now() - interval '30 days'
        LIMIT p_batch
    ), purged AS (
        DELETE FROM public.login_addresses a USING doomed d
        WHERE a.tenant_id = d.tenant_id AND a.user_id = d.user_id AND a.address = d.address RETURNING 1
    )
    SELECT count(*) INTO login_addresses FROM purged;

    WITH doomed AS (
        SELECT k.tenant_id, k.user_id, k.key FROM public.idempotency_keys k
        WHERE k.created_at < now() - interval '24 hours'
        LIMIT p_batch
    ), purged AS (
        DELETE FROM public.idempotency_keys k USING doomed d
        WHERE k.tenant_id = d.tenant_id AND k.user_id = d.user_id AND k.key = d.key RETURNING 1
    )
    SELECT count(*) INTO idempotency_keys FROM purged;
    RETURN NEXT;
END $$;
REVOKE ALL ON FUNCTION purge_expired(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION purge_expired(bigint) TO landmark_app;

-- Everything past its horizon, in batches until none is left, in one transaction;
-- the event log too (24 hours, as purge_events). Returns how many rows went.
CREATE FUNCTION admin.purge_expired()
RETURNS TABLE (sessions bigint, session_tokens bigint, login_failures bigint, login_addresses bigint,
               idempotency_keys bigint, events bigint)
LANGUAGE plpgsql AS $$
DECLARE batch record;
BEGIN
    sessions := 0; session_tokens := 0; login_failures := 0; login_addresses := 0; idempotency_keys := 0;
    LOOP
        SELECT p.* INTO batch FROM public.purge_expired(10000) AS p;
        sessions := sessions + batch.sessions;
        session_tokens := session_tokens + batch.session_tokens;
        login_failures := login_failures + batch.login_failures;
        login_addresses := login_addresses + batch.login_addresses;
        idempotency_keys := idempotency_keys + batch.idempotency_keys;
        EXIT WHEN greatest(batch.sessions, batch.session_tokens, batch.login_failures,
                           batch.login_addresses, batch.idempotency_keys) < 10000;
    END LOOP;
    events := public.purge_events();
    RETURN NEXT;
END $$;

-- ---------------------------------------------------------------------------
-- A disabled user's notes leave every read: lists, search, clusters, author=,
-- a single note, and the note counts of places. Every read goes through this
-- view (0004), so redefining it covers them all; enabling the user brings the
-- notes back. The disabled users are found once per statement (an InitPlan over
-- the partial index below, usually empty), and `<> ALL` is then a filter on the
-- rows the indexes find, so every index the view's readers use still serves them.
CREATE INDEX users_disabled ON users (tenant_id, id) WHERE disabled_at IS NOT NULL;

CREATE OR REPLACE VIEW tenant_notes AS
SELECT * FROM notes
WHERE tenant_id = current_tenant_id()
  AND user_id <> ALL (ARRAY(SELECT d.id FROM users d
                            WHERE d.tenant_id = current_tenant_id() AND d.disabled_at IS NOT NULL));
