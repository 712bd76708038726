-- Revocation that every replica sees within a second (issue 38).
--
-- A replica keeps the access tokens it has looked up (AccessTokenCache), so that a request
-- whose token it knows goes to the database once, for its statement, not first for the
-- token. What it keeps must not outlive what it was built on: each tenant has an epoch
-- here, raised by the transaction that takes anything away from a token's holder, and a
-- token is kept with the epoch its lookup read (in the same statement, so the same
-- snapshot). Every replica reads its tenants' epochs a few times a second and drops what
-- an epoch passed; a replica that cannot read them uses nothing it kept (it fails closed).
--
-- Triggers raise the epoch, so that psql's changes (admin.set_user_disabled,
-- admin.end_user_sessions, a DELETE by hand) count as the service's do. Only what revokes
-- counts: a session revoked or deleted, a live access token deleted or cut short, a user
-- disabled, renamed or deleted. A refresh's writes, an enabled user and expired tokens'
-- retention do not. A tenant's own `disabled_at` and `slug` are read by the replicas beside
-- the epochs (tenants is a reference table on Citus, and a trigger there would write shards).

-- Distributed like every tenant table, colocated with users, so that a trigger's upsert on
-- a shard of users or sessions stays on that worker. No row-level security: an epoch is a
-- counter, not content, and each replica reads the epochs of every tenant it serves. No
-- foreign key either: an epoch outliving its tenant costs a row and nothing else.
CREATE TABLE auth_epochs (
    tenant_id bigint PRIMARY KEY,
    epoch bigint NOT NULL
);
SELECT admin.distribute_new_table('auth_epochs');
GRANT SELECT ON auth_epochs TO landmark_app;

-- The upsert's SET names only a column (Citus refuses functions there that are not
-- immutable). A tenant's revocations queue on its row until each commits: they are rare
-- and their transactions short.
CREATE FUNCTION raise_auth_epoch() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
DECLARE v_tenant bigint := CASE TG_OP WHEN 'DELETE' THEN OLD.tenant_id ELSE NEW.tenant_id END;
BEGIN
    INSERT INTO auth_epochs AS e (tenant_id, epoch) VALUES (v_tenant, 1)
    ON CONFLICT (tenant_id) DO UPDATE SET epoch = e.epoch + 1;
    RETURN NULL;
END $$;

CREATE TRIGGER sessions_revoked_raise_auth_epoch AFTER UPDATE OF revoked_at ON sessions FOR EACH ROW
    WHEN (OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL) EXECUTE FUNCTION raise_auth_epoch();
CREATE TRIGGER sessions_deleted_raise_auth_epoch AFTER DELETE ON sessions FOR EACH ROW
    WHEN (OLD.revoked_at IS NULL) EXECUTE FUNCTION raise_auth_epoch();
CREATE TRIGGER session_tokens_deleted_raise_auth_epoch AFTER DELETE ON session_tokens FOR EACH ROW
    WHEN (OLD.kind = 'access' AND OLD.expires_at > now()) EXECUTE FUNCTION raise_auth_epoch();
CREATE TRIGGER session_tokens_shortened_raise_auth_epoch AFTER UPDATE OF expires_at ON session_tokens FOR EACH ROW
    WHEN (OLD.kind = 'access' AND NEW.expires_at < OLD.expires_at AND OLD.expires_at > now()) EXECUTE FUNCTION raise_auth_epoch();
CREATE TRIGGER users_changed_raise_auth_epoch AFTER UPDATE OF disabled_at, username ON users FOR EACH ROW
    WHEN (OLD.disabled_at IS DISTINCT FROM NEW.disabled_at OR OLD.username IS DISTINCT FROM NEW.username)
    EXECUTE FUNCTION raise_auth_epoch();
CREATE TRIGGER users_deleted_raise_auth_epoch AFTER DELETE ON users FOR EACH ROW EXECUTE FUNCTION raise_auth_epoch();
