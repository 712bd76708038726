-- Blocks (issue 34): a user blocks another by name, and from then on neither sees the
-- other's notes anywhere: every list, a note by id, a profile, a place's count, clusters,
-- events. The reads name both directions through the two indexes below, once per statement
-- (a hashed sub-plan), so a user's thousand blocks cost one index range each way.

-- A table a migration makes after `distribute`: distributed at once, colocated with users,
-- before its foreign keys name users (Citus takes foreign keys to a distributed table only
-- from another); on one server, or before `distribute`, nothing to do.
CREATE FUNCTION admin.distribute_new_table(p_table regclass) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN RETURN; END IF;
    IF NOT EXISTS (SELECT FROM pg_dist_partition WHERE logicalrelid = 'users'::regclass) THEN RETURN; END IF;
    -- The foreign keys and indexes that follow in this transaction, one shard after another.
    SET LOCAL citus.multi_shard_modify_mode = 'sequential';
    PERFORM admin.distribute_quietly(p_table, 'users');
END $$;

CREATE TABLE blocks (
    tenant_id bigint NOT NULL,
    blocker_id bigint NOT NULL,
    blocked_id bigint NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, blocker_id, blocked_id),
    CONSTRAINT blocks_not_self CHECK (blocker_id <> blocked_id)
);
SELECT admin.distribute_new_table('blocks');
-- One constraint per statement: Citus takes no other subcommand beside an ADD CONSTRAINT.
ALTER TABLE blocks ADD FOREIGN KEY (tenant_id) REFERENCES tenants (id);
-- Deleting either account removes the block.
ALTER TABLE blocks ADD FOREIGN KEY (tenant_id, blocker_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE;
ALTER TABLE blocks ADD FOREIGN KEY (tenant_id, blocked_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE;
-- Who blocked the viewer; and the viewer's own list, newest first (GET /v1/me/blocks).
CREATE INDEX blocks_blocked ON blocks (tenant_id, blocked_id, blocker_id);
CREATE INDEX blocks_newest ON blocks (tenant_id, blocker_id, created_at DESC, blocked_id DESC);

ALTER TABLE blocks ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON blocks USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
GRANT SELECT, INSERT, DELETE ON blocks TO landmark_app;
