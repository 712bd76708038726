-- What each revocation took away, so that a replica can keep trusting every other token of
-- the tenant (issue 38).
--
-- Migration 0045 raises a tenant's epoch with each revocation, and a replica that saw the
-- epoch rise dropped every token of the tenant it kept. In a busy tenant someone logs out
-- every second, so replicas looked up again, each second, every token they kept. And the
-- signed access tokens of this migration, which a replica verifies without the database,
-- must know *whose* access was taken away.
--
-- Each raise now writes a row here with the epoch it raised to: the user or session it
-- concerned. A token (signed or kept) carries the epoch its issue or lookup read in the same
-- snapshot as its checks; a replica trusts it only while no row of its user or session has
-- a higher epoch. The raise updates the tenant's one epoch row, so a tenant's raises queue
-- on its lock and commit in epoch order: once a replica reads epoch E, every row up to E is
-- committed, and reading the rows above what it knew misses none.
--
-- The service deletes rows an access token's lifetime and an hour after their transaction
-- began (purge_auth_revocations): no token they could concern is alive by then.

CREATE TABLE auth_revocations (
    tenant_id bigint NOT NULL,
    epoch bigint NOT NULL,
    -- The user whose access was taken away; NULL when only the session is known (a token
    -- deleted or cut short: its session's tokens older than this epoch are looked up again).
    user_id bigint,
    session_id bigint,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, epoch)
);
SELECT admin.distribute_new_table('auth_revocations');
GRANT SELECT ON auth_revocations TO landmark_app;
CREATE INDEX auth_revocations_created_at ON auth_revocations (created_at);

CREATE OR REPLACE FUNCTION raise_auth_epoch() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
DECLARE
    v_row record := CASE TG_OP WHEN 'DELETE' THEN OLD ELSE NEW END;
    v_epoch bigint;
    v_user bigint;
    v_session bigint;
BEGIN
    CASE TG_TABLE_NAME
        WHEN 'users' THEN v_user := v_row.id;
        WHEN 'sessions' THEN v_user := v_row.user_id; v_session := v_row.id;
        WHEN 'session_tokens' THEN v_session := v_row.session_id;
    END CASE;
    INSERT INTO auth_epochs AS e (tenant_id, epoch) VALUES (v_row.tenant_id, 1)
    ON CONFLICT (tenant_id) DO UPDATE SET epoch = e.epoch + 1
    RETURNING e.epoch INTO v_epoch;
    INSERT INTO auth_revocations (tenant_id, epoch, user_id, session_id) VALUES (v_row.tenant_id, v_epoch, v_user, v_session);
    RETURN NULL;
END $$;

-- Retention, called by the service's RetentionService with the access tokens' lifetime.
CREATE FUNCTION purge_auth_revocations(p_keep_seconds bigint, p_batch bigint DEFAULT 10000) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
DECLARE v_purged bigint;
BEGIN
    WITH doomed AS (
        SELECT r.tenant_id, r.epoch FROM public.auth_revocations r
        WHERE r.created_at < now() - make_interval(secs => p_keep_seconds) - interval '1 hour'
        LIMIT p_batch
    ), purged AS (
        DELETE FROM public.auth_revocations r USING doomed d
        WHERE r.tenant_id = d.tenant_id AND r.epoch = d.epoch RETURNING 1
    )
    SELECT count(*) INTO v_purged FROM purged;
    RETURN v_purged;
END $$;
REVOKE ALL ON FUNCTION purge_auth_revocations(bigint, bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION purge_auth_revocations(bigint, bigint) TO landmark_app;
