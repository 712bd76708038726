-- raise_auth_epoch() (0046) told users, sessions and session_tokens apart by TG_TABLE_NAME.
-- On Citus the trigger fires on the shards, whose names carry a suffix (users_102008), so
-- no branch matched and every revocation failed there (SQLSTATE 20000, case not found):
-- signups too, since a session's first token reads nothing but a login's revocation does.
-- The table is now told by the start of its name; session_tokens before sessions, which is
-- not a prefix of it but reads more plainly so.
CREATE OR REPLACE FUNCTION raise_auth_epoch() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
DECLARE
    v_row record := CASE TG_OP WHEN 'DELETE' THEN OLD ELSE NEW END;
    v_epoch bigint;
    v_user bigint;
    v_session bigint;
BEGIN
    IF starts_with(TG_TABLE_NAME, 'session_tokens') THEN
        v_session := v_row.session_id;
    ELSIF starts_with(TG_TABLE_NAME, 'sessions') THEN
        v_user := v_row.user_id;
        v_session := v_row.id;
    ELSIF starts_with(TG_TABLE_NAME, 'users') THEN
        v_user := v_row.id;
    ELSE
        RAISE EXCEPTION 'raise_auth_epoch() on an unexpected table %', TG_TABLE_NAME;
    END IF;
    INSERT INTO auth_epochs AS e (tenant_id, epoch) VALUES (v_row.tenant_id, 1)
    ON CONFLICT (tenant_id) DO UPDATE SET epoch = e.epoch + 1
    RETURNING e.epoch INTO v_epoch;
    INSERT INTO auth_revocations (tenant_id, epoch, user_id, session_id) VALUES (v_row.tenant_id, v_epoch, v_user, v_session);
    RETURN NULL;
END $$;
