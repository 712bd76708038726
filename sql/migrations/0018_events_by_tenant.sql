-- The event log's horizon per tenant where Citus holds the log (issue 23).
--
-- On one server the service keeps one horizon for the whole log (0008): ids come from one
-- sequence and one snapshot says which of them are final. On Citus a tenant's events are
-- written by triggers on the worker that holds its shard: its ids come from that worker's
-- range of event_ids (group g's ids start at g<<48 + 1, 0016) and its xids are that
-- worker's. A snapshot of one node says nothing about another's, so event_ids_after() and
-- event_log_start() mean nothing there (and Citus cannot plan them). Instead:
--
-- * event_probe(tenant, after), delegated to the tenant's worker, returns that worker's
--   snapshot bounds, the tenant's newest visible id there and the worker's id floor. The
--   service moves each watched tenant's head by them (Events/TenantHorizon.swift).
-- * event_log_mode() tells the service which of the two to use.
-- * purge_tenant_events() purges a tenant's ids range by range (a range per node its ids
--   came from) and records how far in event_purges, since deleting below one global id
--   would take every event of the nodes with lower ranges; purge_events() does it for
--   every tenant. The same code runs on one server (one range), where
--   event_log_state.purged_through still moves as before.
--
-- All of it applies without Citus: admin.distribute() distributes event_purges (it has a
-- tenant_id) and delegates event_probe where the citus extension is present.

-- How far each tenant's events were purged, per range of ids (id >> 48: the node whose
-- sequence gave them, 0 on one server). A resume on Citus from below purged_through of its
-- range is a reset. Rows of ranges a tenant left (its shard moved) stay, so that a resume
-- after the shard came back is still checked.
CREATE TABLE event_purges (
    tenant_id bigint NOT NULL REFERENCES tenants (id),
    id_range bigint NOT NULL,
    purged_through bigint NOT NULL,
    PRIMARY KEY (tenant_id, id_range)
);
-- Through EXECUTE: on a cluster already distributed, Citus sends this command to the
-- workers as the text of the statement that ran it, which for a migration file run as one
-- string is the whole file, and the workers refuse several commands in one.
DO $$ BEGIN EXECUTE 'ALTER TABLE event_purges ENABLE ROW LEVEL SECURITY'; END $$;
CREATE POLICY tenant_isolation ON event_purges USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
GRANT SELECT ON event_purges TO landmark_app;

-- 'per_tenant' where Citus holds the event log, else 'global'.
CREATE FUNCTION event_log_mode() RETURNS text
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public, pg_temp
AS $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN RETURN 'global'; END IF;
    -- pg_dist_partition exists only with the extension: PL/pgSQL plans a statement when it
    -- first reaches it, so without the extension this one is never planned.
    IF EXISTS (SELECT FROM pg_dist_partition WHERE logicalrelid = 'events'::regclass) THEN
        RETURN 'per_tenant';
    END IF;
    RETURN 'global';
END $$;
REVOKE ALL ON FUNCTION event_log_mode() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION event_log_mode() TO landmark_app;

-- One look at a tenant's events on the node that holds them: {snapshot xmin, snapshot
-- xmax, the node's id floor, the tenant's newest visible id in the node's range above
-- p_after}. When there is none: p_after if it is in the range, else floor - 1. A p_after
-- outside the range (from before the tenant's shard moved) reads the whole range.
--
-- The newest id is read first and the snapshot after: an id visible to the first
-- statement was taken before the second's snapshot, and so was every lower id of this
-- node, and its holder's xid before that (append_events takes the xid first); so every
-- holder of an id below the newest has an xid below the xmax returned. Only the newest id
-- is returned: the horizon needs no other (ids of one tenant are sparse, so any gap may be
-- one still filling, and no list of ids can tell).
--
-- The floor (MINVALUE of the local event_ids, which Citus sets per node) says which node
-- answered: a changed floor means the tenant's shard moved. Every statement that reads a
-- table names the tenant. Delegated to the tenant's worker by admin.distribute(); called
-- any other way on Citus (within a larger statement, or before admin.distribute() ran) it
-- would answer for the wrong node, so it refuses to run where the tenant's shard is not.
CREATE FUNCTION event_probe(p_tenant bigint, p_after bigint) RETURNS bigint[]
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp
AS $$
DECLARE v_floor bigint; v_ceiling bigint; v_after bigint; v_newest bigint;
BEGIN
    IF event_log_mode() = 'per_tenant' AND NOT EXISTS (
        SELECT FROM pg_dist_placement p JOIN pg_dist_local_group l ON l.groupid = p.groupid
        WHERE p.shardid = get_shard_id_for_distribution_column('events', p_tenant)
    ) THEN
        RAISE EXCEPTION 'event_probe(%) ran on a node without the tenant''s shard', p_tenant
            USING HINT = 'Call it alone (SELECT event_probe($1, $2)) after admin.distribute() has delegated it.';
    END IF;
    SELECT s.min_value, s.max_value INTO v_floor, v_ceiling
    FROM pg_sequences s WHERE s.schemaname = 'public' AND s.sequencename = 'event_ids';
    v_after := CASE WHEN p_after BETWEEN v_floor - 1 AND v_ceiling THEN p_after ELSE v_floor - 1 END;
    SELECT max(e.id) INTO v_newest FROM events e
    WHERE e.tenant_id = p_tenant AND e.id > v_after AND e.id <= v_ceiling;
    RETURN ARRAY[pg_snapshot_xmin(pg_current_snapshot())::text::bigint,
                 pg_snapshot_xmax(pg_current_snapshot())::text::bigint,
                 v_floor, coalesce(v_newest, v_after)];
END $$;
REVOKE ALL ON FUNCTION event_probe(bigint, bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION event_probe(bigint, bigint) TO landmark_app;

-- Events are kept 24 hours. Per tenant and per range of ids, the prefix of the range older
-- than that goes, so "every id of the range above purged_through is still here" holds for
-- each range. On one server the global mark moves as before (0008): the global horizon
-- starts from it and resumes are checked against it there (event_purges is kept there
-- too, unread).
--
-- One tenant per call, so that RetentionService can purge each in a transaction of its
-- own: on Citus a transaction open on a worker holds back the event streams of that
-- worker's tenants (TenantHorizon), so none should last as long as a purge of every
-- tenant. Every statement that reads or writes the tenant's rows names it (routed to its
-- shard), and the upsert's SET names only columns (Citus refuses functions there that
-- are not immutable).
CREATE FUNCTION purge_tenant_events(p_tenant bigint) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
DECLARE
    v_cutoff timestamptz := now() - interval '24 hours';
    v_range bigint; v_through bigint; v_max bigint; v_count bigint := 0; v_deleted bigint;
BEGIN
    FOR v_range, v_through IN
        SELECT e.id >> 48, max(e.id) FROM events e
        WHERE e.tenant_id = p_tenant AND e.created_at < v_cutoff GROUP BY 1
    LOOP
        DELETE FROM events WHERE tenant_id = p_tenant AND id BETWEEN v_range << 48 AND v_through;
        GET DIAGNOSTICS v_deleted = ROW_COUNT;
        v_count := v_count + v_deleted;
        INSERT INTO event_purges AS p (tenant_id, id_range, purged_through) VALUES (p_tenant, v_range, v_through)
        ON CONFLICT (tenant_id, id_range) DO UPDATE SET purged_through = greatest(p.purged_through, excluded.purged_through);
        v_max := greatest(v_max, v_through);
    END LOOP;
    IF v_max IS NOT NULL AND event_log_mode() = 'global' THEN
        UPDATE event_log_state SET purged_through = greatest(purged_through, v_max);
    END IF;
    RETURN v_count;
END $$;
REVOKE ALL ON FUNCTION purge_tenant_events(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION purge_tenant_events(bigint) TO landmark_app;

-- The tenants with events to purge.
CREATE FUNCTION event_purge_tenants() RETURNS SETOF bigint
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
AS $$ SELECT DISTINCT tenant_id FROM events WHERE created_at < now() - interval '24 hours' $$;
REVOKE ALL ON FUNCTION event_purge_tenants() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION event_purge_tenants() TO landmark_app;

-- Every tenant's, in one transaction: for operators (admin.purge_events(),
-- admin.purge_expired()) and older replicas.
CREATE OR REPLACE FUNCTION purge_events() RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
DECLARE v_tenant bigint; v_count bigint := 0;
BEGIN
    FOR v_tenant IN SELECT * FROM event_purge_tenants() LOOP
        v_count := v_count + purge_tenant_events(v_tenant);
    END LOOP;
    RETURN v_count;
END $$;

-- admin.distribute() of 0016 with two changes: a tenant table that Citus made a local table
-- of (created after distribution with a foreign key to the reference table tenants, as
-- event_purges is on a cluster migrated after 0016) is distributed too; and event_probe is
-- delegated to the worker of the tenant it is called for, once.
CREATE OR REPLACE FUNCTION admin.distribute() RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE v_table regclass; v_function regprocedure;
BEGIN
    IF NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN RETURN; END IF;
    IF NOT EXISTS (SELECT FROM pg_dist_node WHERE noderole = 'primary' AND shouldhaveshards) THEN
        RAISE EXCEPTION 'no worker node: add workers with citus_add_node() first';
    END IF;
    -- tenants alone: by default Citus would turn every table with a foreign key to it
    -- into a coordinator-local table, and those with identity columns cannot be distributed.
    SET LOCAL citus.enable_local_reference_table_foreign_keys = off;
    SET LOCAL citus.multi_shard_modify_mode = 'sequential';
    IF NOT EXISTS (SELECT FROM pg_dist_partition WHERE logicalrelid = 'tenants'::regclass) THEN
        PERFORM create_reference_table('tenants');
        RETURN NEXT 'tenants: reference table';
    END IF;
    IF NOT EXISTS (SELECT FROM pg_dist_partition WHERE logicalrelid = 'users'::regclass) THEN
        PERFORM create_distributed_table('users', 'tenant_id');
        RETURN NEXT 'users: distributed by tenant_id';
    END IF;
    FOR v_table IN SELECT * FROM tenant_tables() LOOP
        IF NOT EXISTS (SELECT FROM pg_dist_partition WHERE logicalrelid = v_table AND partmethod = 'h') THEN
            -- The name first: a local table Citus had taken in is replaced (a new oid).
            RETURN NEXT format('%s: distributed by tenant_id', v_table);
            PERFORM create_distributed_table(v_table::text, 'tenant_id', colocate_with => 'users');
        END IF;
    END LOOP;
    -- The functions that policies and triggers call run on the workers too. Citus copies
    -- a function when it is created, unless it was created with copying off (0001) or
    -- before the tables it follows were distributed.
    FOR v_function IN
        SELECT p.oid::regprocedure FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname = 'public' AND p.proowner = current_user::regrole AND p.prokind = 'f'
          AND NOT EXISTS (SELECT FROM pg_dist_object d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid)
    LOOP
        PERFORM create_distributed_function(v_function);
        RETURN NEXT format('%s: on every node', v_function);
    END LOOP;
    -- A top-level SELECT event_probe($1, $2) runs on the worker of tenant $1, so that its
    -- snapshot, xids and ids are all that worker's (force_delegation: also inside a
    -- transaction block).
    IF NOT EXISTS (SELECT FROM pg_dist_object d WHERE d.classid = 'pg_proc'::regclass
                   AND d.objid = 'event_probe(bigint,bigint)'::regprocedure AND d.distribution_argument_index IS NOT NULL) THEN
        PERFORM create_distributed_function('event_probe(bigint,bigint)', 'p_tenant',
                                            colocate_with := 'events', force_delegation := true);
        RETURN NEXT 'event_probe(bigint,bigint): run on the tenant''s worker';
    END IF;
    EXECUTE format('ALTER DATABASE %I SET citus.propagate_set_commands = %L', current_database(), 'local');
END $$;
