-- Moderators, their decisions and the audit log (issue 34). An operator makes a user a
-- moderator of their tenant (admin.set_moderator); moderators see the open reports grouped by
-- target and decide: dismiss (the target shown again), remove (deleted for everyone), suspend
-- or ban the author (the account disabled until a date or for good; the reported content
-- removed). Every report and every decision is a row of moderation_log, with the content as
-- it was then.

ALTER TABLE users ADD COLUMN moderator boolean NOT NULL DEFAULT false;
-- A suspension's end: the account is disabled until then (lift_ended_suspensions()).
ALTER TABLE users ADD COLUMN suspended_until timestamptz;

CREATE TABLE moderation_log (
    tenant_id bigint NOT NULL,
    id bigint GENERATED ALWAYS AS IDENTITY,
    kind text NOT NULL CONSTRAINT moderation_log_kind CHECK (kind IN ('report', 'decision')),
    target_type text NOT NULL CONSTRAINT moderation_log_target_type CHECK (target_type IN ('note', 'place', 'user')),
    target_id bigint NOT NULL,
    -- The target's author, creator or self then, by id and name (kept when the account goes).
    author_id bigint,
    author_name text,
    -- A report's reason (never its reporter), or a decision's action, moderator and note.
    reason text,
    action text CONSTRAINT moderation_log_action CHECK (action IN ('dismiss', 'remove', 'suspend_author', 'ban_author')),
    moderator_id bigint,
    moderator_name text,
    until timestamptz,
    note text CONSTRAINT moderation_log_note CHECK (char_length(note) BETWEEN 1 AND 1000),
    -- The content's text then: the note's body, the place's name, the username.
    content text,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    CONSTRAINT moderation_log_shape CHECK (
        (kind = 'report' AND reason IS NOT NULL AND action IS NULL)
        OR (kind = 'decision' AND action IS NOT NULL AND reason IS NULL))
);
SELECT admin.distribute_new_table('moderation_log');
ALTER TABLE moderation_log ADD FOREIGN KEY (tenant_id) REFERENCES tenants (id);
ALTER TABLE moderation_log ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON moderation_log USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
GRANT SELECT, INSERT ON moderation_log TO landmark_app;

-- Grants or withdraws a user's moderator role; false when there is no such user.
CREATE FUNCTION admin.set_moderator(p_slug text, p_username text, p_moderator boolean) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE v_tenant bigint; v_user bigint;
BEGIN
    SELECT id INTO v_tenant FROM tenants WHERE slug = p_slug;
    UPDATE users SET moderator = p_moderator
    WHERE tenant_id = v_tenant AND lower(username) = lower(p_username) RETURNING id INTO v_user;
    RETURN v_user IS NOT NULL;
END $$;

-- Every tenant's log, for operators.
CREATE VIEW admin.moderation_log AS
SELECT t.slug AS tenant, l.* FROM moderation_log l JOIN tenants t ON t.id = l.tenant_id;

-- What waits past the 24 hours app review teams expect: each target with open reports the
-- oldest of which is older than that, the most overdue first.
CREATE FUNCTION admin.moderation_overdue() RETURNS TABLE (
    tenant text, target_type text, target_id bigint, open_reports bigint, oldest_report_at timestamptz, overdue interval)
LANGUAGE sql STABLE AS $$
    SELECT t.slug, r.target_type, r.target_id, r.reports, r.oldest, now() - r.oldest - interval '24 hours'
    FROM (SELECT tenant_id, target_type, target_id, count(*) AS reports, min(created_at) AS oldest
          FROM reports WHERE state = 'open'
          GROUP BY tenant_id, target_type, target_id) r
    JOIN tenants t ON t.id = r.tenant_id
    WHERE r.oldest < now() - interval '24 hours'
    ORDER BY r.oldest
$$;

-- Per tenant, its open reports and the age of the oldest, for /metrics.
CREATE FUNCTION open_report_stats() RETURNS TABLE (tenant text, open_reports bigint, oldest_seconds float8)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
    SELECT t.slug, r.reports, extract(epoch FROM now() - r.oldest)::float8
    FROM (SELECT tenant_id, count(*) AS reports, min(created_at) AS oldest FROM reports WHERE state = 'open' GROUP BY tenant_id) r
    JOIN tenants t ON t.id = r.tenant_id
$$;
REVOKE ALL ON FUNCTION open_report_stats() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION open_report_stats() TO landmark_app;

-- Suspensions that have run out: the accounts enabled again (their notes return with them,
-- users_disabled_notes, 0016). The retention service calls it on its timer.
CREATE FUNCTION lift_ended_suspensions() RETURNS integer
LANGUAGE sql SECURITY DEFINER SET search_path = public, pg_temp AS $$
    WITH lifted AS (
        UPDATE users SET disabled_at = NULL, suspended_until = NULL
        WHERE suspended_until IS NOT NULL AND suspended_until <= now()
        RETURNING 1
    )
    SELECT count(*)::integer FROM lifted
$$;
REVOKE ALL ON FUNCTION lift_ended_suspensions() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION lift_ended_suspensions() TO landmark_app;
