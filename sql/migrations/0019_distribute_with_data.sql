-- Distributing a deployment that has data (issue 23). create_distributed_table copies a
-- table's rows into its shards, and the shards' triggers (0008, 0014, 0016) fired for
-- every copied row: each note again as an event and a grid delta, and note_audience(),
-- which the workers get only at the end of distribute(), did not exist there yet. The
-- copy now runs with the table's own triggers off (ALTER TABLE reaches the shards), and
-- the copied rows are then removed from the coordinator's disk, where Citus leaves them;
-- the shards are analysed.

-- Distributes p_table by tenant_id (colocated with p_colocate, or a new group) without
-- firing its triggers for the rows it copies.
CREATE FUNCTION admin.distribute_quietly(p_table regclass, p_colocate text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('ALTER TABLE %s DISABLE TRIGGER USER', p_table);
    PERFORM create_distributed_table(p_table::text, 'tenant_id', colocate_with => coalesce(p_colocate, 'default'));
    EXECUTE format('ALTER TABLE %s ENABLE TRIGGER USER', p_table);
    -- New shards have no statistics until autovacuum comes by, and the planner then guesses
    -- (the benchmark's nearest took 260 ms instead of 2). ANALYZE reaches every shard.
    IF pg_relation_size(p_table) > 0 THEN
        EXECUTE format('ANALYZE %s', p_table);
    END IF;
END $$;

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
        PERFORM admin.distribute_quietly('users', NULL);
        RETURN NEXT 'users: distributed by tenant_id';
    END IF;
    FOR v_table IN SELECT * FROM tenant_tables() LOOP
        IF NOT EXISTS (SELECT FROM pg_dist_partition WHERE logicalrelid = v_table AND partmethod = 'h') THEN
            -- The name first: a local table Citus had taken in is replaced (a new oid).
            RETURN NEXT format('%s: distributed by tenant_id', v_table);
            PERFORM admin.distribute_quietly(v_table, 'users');
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
    -- The rows copied into the shards stay on the coordinator's disk, unseen: free it, those
    -- that refer to others first.
    FOR v_table IN SELECT t FROM tenant_tables() WITH ORDINALITY AS l(t, n) ORDER BY n DESC LOOP
        IF pg_relation_size(v_table) > 0 THEN
            PERFORM truncate_local_data_after_distributing_table(v_table);
        END IF;
    END LOOP;
END $$;
