-- Issue 38: a write under a tenant's rules kept from an earlier read (its word list, at a
-- version of the tenant's row) goes out behind a check in the same pipeline,
--   SELECT require_kept_rules(EXISTS (SELECT FROM users u, tenants t WHERE … the rules hold))
-- then the plain INSERT … VALUES (or UPDATE) and COMMIT: one round trip. When the rules no
-- longer hold, the check raises, the write after it never runs and the transaction rolls
-- back; the replica reads the rules and tries again. It replaces the guarded
-- INSERT … SELECT FROM users, tenants, which Citus 13.2 refuses to plan with bound values in
-- its target list (42P18), so a replica on Citus read the rules before every write.
CREATE FUNCTION require_kept_rules(p_hold boolean) RETURNS void
LANGUAGE plpgsql
AS $$
BEGIN
    IF p_hold IS NOT TRUE THEN
        -- A code of this service's own (class LR): the caller tells it from any other failure.
        RAISE EXCEPTION 'the tenant''s write rules changed since they were read' USING ERRCODE = 'LR001';
    END IF;
END
$$;
REVOKE ALL ON FUNCTION require_kept_rules(boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION require_kept_rules(boolean) TO landmark_app;
