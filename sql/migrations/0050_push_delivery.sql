-- Push notifications (issue 39), third part: delivery. A sender on every replica takes a
-- tenant's queue (one sender per tenant at a time, as mail's, 0031), sends its pending matches
-- through APNs with the tenant's credentials, and records each push.

-- The tenant's APNs credentials (token-based: the team, the key's id, the .p8 key). The operator
-- gives the key as text with psql (admin.set_tenant_apns); the first replica that needs
-- it seals it with LR_DATA_KEY into apns_private_key_sealed and clears the text
-- (seal_tenant_apns_key below), so it rests encrypted. Sending is off without them.
ALTER TABLE tenants ADD COLUMN apns_team_id text CONSTRAINT tenants_apns_team_id CHECK (apns_team_id ~ '^[A-Z0-9]{10}$');
ALTER TABLE tenants ADD COLUMN apns_key_id text CONSTRAINT tenants_apns_key_id CHECK (apns_key_id ~ '^[A-Z0-9]{10}$');
ALTER TABLE tenants ADD COLUMN apns_private_key text CONSTRAINT tenants_apns_private_key CHECK (
    apns_private_key LIKE '-----BEGIN PRIVATE KEY-----%' AND char_length(apns_private_key) <= 1000);
ALTER TABLE tenants ADD COLUMN apns_private_key_sealed bytea CONSTRAINT tenants_apns_private_key_sealed CHECK (length(apns_private_key_sealed) <= 2000);
ALTER TABLE tenants ADD CONSTRAINT tenants_apns_complete CHECK (
    (apns_team_id IS NULL) = (apns_key_id IS NULL)
    AND (apns_team_id IS NULL) = (apns_private_key IS NULL AND apns_private_key_sealed IS NULL));

-- Operators set a tenant's APNs credentials with psql; NULLs clear them.
CREATE FUNCTION admin.set_tenant_apns(p_slug text, p_team_id text, p_key_id text, p_private_key text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE tenants SET apns_team_id = upper(btrim(p_team_id)), apns_key_id = upper(btrim(p_key_id)),
        apns_private_key = btrim(p_private_key), apns_private_key_sealed = NULL
    WHERE slug = p_slug;
    IF NOT FOUND THEN RAISE EXCEPTION 'no tenant with slug %', p_slug USING ERRCODE = 'no_data_found'; END IF;
END $$;

-- The service seals the key it read as text, unless the operator changed it meanwhile.
CREATE FUNCTION seal_tenant_apns_key(p_tenant bigint, p_private_key text, p_sealed bytea) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
BEGIN
    UPDATE tenants SET apns_private_key = NULL, apns_private_key_sealed = p_sealed
    WHERE id = p_tenant AND apns_private_key = p_private_key;
END $$;
REVOKE ALL ON FUNCTION seal_tenant_apns_key(bigint, text, bytea) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION seal_tenant_apns_key(bigint, text, bytea) TO landmark_app;

-- A match's attempts: when it may next be tried (the hourly cap, a busy APNs).
ALTER TABLE push_matches ADD COLUMN next_attempt_at timestamptz NOT NULL DEFAULT now();
-- A match sent in a summary names the push that carried it.
ALTER TABLE push_matches ADD COLUMN push_id bigint;
CREATE INDEX push_matches_due ON push_matches (next_attempt_at) WHERE state = 'pending';

-- The pushes sent to each user: what the hourly cap counts, and the operator's record.
CREATE TABLE pushes (
    tenant_id bigint NOT NULL,
    id bigint GENERATED ALWAYS AS IDENTITY,
    user_id bigint NOT NULL,
    watch_id bigint,
    -- The matches it carried: 1, or more for a summary ("5 new notes near Home").
    matches integer NOT NULL CHECK (matches > 0),
    -- Devices that took it, and devices APNs called gone (removed).
    delivered integer NOT NULL DEFAULT 0,
    unregistered integer NOT NULL DEFAULT 0,
    sent_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, id)
);
SELECT admin.distribute_new_table('pushes');
ALTER TABLE pushes ADD FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE;
CREATE INDEX pushes_user ON pushes (tenant_id, user_id, sent_at);
ALTER TABLE pushes ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON pushes USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
GRANT SELECT, INSERT, DELETE ON pushes TO landmark_app;
GRANT USAGE ON SEQUENCE pushes_id_seq TO landmark_app;

-- Per tenant: which sender holds its queue until when, and APNs's breaker.
CREATE TABLE push_queues (
    tenant_id bigint NOT NULL PRIMARY KEY,
    held_by text,
    held_until timestamptz,
    blocked_until timestamptz,
    failures integer NOT NULL DEFAULT 0,
    last_error text
);
SELECT admin.distribute_new_table('push_queues');
ALTER TABLE push_queues ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON push_queues USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
GRANT SELECT, INSERT, UPDATE ON push_queues TO landmark_app;

-- The tenants with pushes due and credentials to send them, for the senders, which then work
-- tenant by tenant (on Citus a claim with FOR UPDATE must stay in one tenant's shard).
CREATE FUNCTION push_due_tenants(p_now timestamptz) RETURNS SETOF bigint
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public, pg_temp
AS $$
BEGIN
    RETURN QUERY
    SELECT DISTINCT m.tenant_id FROM push_matches m
    WHERE m.state = 'pending' AND m.next_attempt_at <= p_now
      AND m.tenant_id IN (SELECT t.id FROM tenants t WHERE t.apns_team_id IS NOT NULL AND t.disabled_at IS NULL);
END $$;
REVOKE ALL ON FUNCTION push_due_tenants(timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION push_due_tenants(timestamptz) TO landmark_app;

-- Retention (RetentionService): a match not pushed within a day is old news, dropped (a tenant
-- whose credentials come back after a week does not push the week); finished matches go after
-- 7 days, pushes after 30 (what the hourly cap and the operator read). One batch per table.
CREATE FUNCTION purge_push_records(p_batch bigint DEFAULT 10000) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
DECLARE v_stale bigint; v_matches bigint; v_pushes bigint;
BEGIN
    WITH stale AS (
        SELECT m.tenant_id, m.id FROM public.push_matches m
        WHERE m.state = 'pending' AND m.created_at < now() - interval '1 day' LIMIT p_batch
    ), dropped AS (
        UPDATE public.push_matches m SET state = 'dropped', finished_at = now() FROM stale s
        WHERE m.tenant_id = s.tenant_id AND m.id = s.id RETURNING 1
    )
    SELECT count(*) INTO v_stale FROM dropped;
    WITH doomed AS (
        SELECT m.tenant_id, m.id FROM public.push_matches m
        WHERE m.state <> 'pending' AND m.finished_at < now() - interval '7 days' LIMIT p_batch
    ), purged AS (
        DELETE FROM public.push_matches m USING doomed d WHERE m.tenant_id = d.tenant_id AND m.id = d.id RETURNING 1
    )
    SELECT count(*) INTO v_matches FROM purged;
    WITH doomed AS (
        SELECT p.tenant_id, p.id FROM public.pushes p WHERE p.sent_at < now() - interval '30 days' LIMIT p_batch
    ), purged AS (
        DELETE FROM public.pushes p USING doomed d WHERE p.tenant_id = d.tenant_id AND p.id = d.id RETURNING 1
    )
    SELECT count(*) INTO v_pushes FROM purged;
    RETURN greatest(v_stale, v_matches, v_pushes);
END $$;
REVOKE ALL ON FUNCTION purge_push_records(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION purge_push_records(bigint) TO landmark_app;
CREATE INDEX push_matches_finished ON push_matches (finished_at) WHERE state <> 'pending';
CREATE INDEX pushes_sent ON pushes (sent_at);
