-- Nearest first and text search on Citus (issue 23). Citus sends a routed statement to the
-- worker as text, with the shard's name for the view's table, and the worker runs it as
-- landmark_app: the shard's policy applies there, and ST_DWithin and ILIKE are not leakproof,
-- so beneath the policy they cannot be index conditions. The nearest page's second step read
-- every note of the tenant's shard (184 ms for 100,000 notes), after 17 ms of planning on the
-- coordinator and 19 on the worker; a search for a rare word read it all too (103 ms), where
-- the trigram index would have found the few matches. On one server the views run as their
-- owner and the service's prepared statements keep their plans, so neither happens.
--
-- notes_nearest() and notes_search() are those pages as functions the service calls on Citus
-- alone. Delegated to the tenant's worker (admin.distribute() below), each runs there as its
-- owner (SECURITY DEFINER) over the views, which name the caller's tenant as on one server:
-- another tenant's id passed in finds nothing.
CREATE FUNCTION notes_nearest(
    p_tenant bigint, p_viewer bigint, p_lng float8, p_lat float8, p_radius float8, p_limit int,
    p_after_distance float8, p_after_id bigint)
RETURNS TABLE (id bigint, body text, lat float8, lng float8, user_id bigint, username text,
               visibility text, place_id bigint, created_at timestamptz, updated_at timestamptz,
               distance float8)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public, pg_temp
AS $$
DECLARE
    v_origin geography := ST_SetSRID(ST_MakePoint(p_lng, p_lat), 4326)::geography;
    -- No radius: further than any two points on Earth are apart.
    v_radius float8 := coalesce(p_radius, 'Infinity');
BEGIN
    -- The two steps of NoteStore.nearestStatement: the first limit + 1 rows past the cursor
    -- in sphere order give the largest spheroid distance D; the page is the rows within D,
    -- in spheroid order. No cursor: every distance is above -1.
    RETURN QUERY
    WITH sphere_nearest AS (
        SELECT ST_Distance(n.location, v_origin) AS distance
        FROM tenant_notes n
        WHERE n.tenant_id = p_tenant AND (n.visibility = 'public' OR n.user_id = p_viewer)
          AND ST_DWithin(n.location, v_origin, v_radius)
          AND (ST_Distance(n.location, v_origin), n.id) > (coalesce(p_after_distance, -1), coalesce(p_after_id, 0))
        ORDER BY n.location <-> v_origin
        LIMIT p_limit + 1
    ),
    page AS (
        SELECT n.*, ST_Distance(n.location, v_origin) AS distance
        FROM tenant_notes n
        WHERE n.tenant_id = p_tenant AND (n.visibility = 'public' OR n.user_id = p_viewer)
          AND ST_DWithin(n.location, v_origin, v_radius)
          AND (ST_Distance(n.location, v_origin), n.id) > (coalesce(p_after_distance, -1), coalesce(p_after_id, 0))
          AND ST_DWithin(n.location, v_origin, (SELECT max(s.distance) + 0.001 FROM sphere_nearest s))
        ORDER BY distance, n.id
        LIMIT p_limit + 1
    )
    SELECT n.id, n.body, ST_Y(n.location::geometry), ST_X(n.location::geometry), n.user_id, u.username,
           n.visibility, n.place_id, n.created_at, n.updated_at, n.distance
    FROM page n
    JOIN tenant_users u ON u.tenant_id = p_tenant AND u.id = n.user_id
    ORDER BY n.distance, n.id;
END $$;
REVOKE ALL ON FUNCTION notes_nearest(bigint, bigint, float8, float8, float8, int, float8, bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION notes_nearest(bigint, bigint, float8, float8, float8, int, float8, bigint) TO landmark_app;

-- The text search page of NoteStore.newestStatement (a text search with no other filter,
-- newest first), the same rows in the same order, in steps: the matches among the newest
-- 1,000 notes past the cursor; with at least 5 of them (1 in 200) but not a page, the walk
-- goes on through at most 15,000 more; otherwise, or when that was not enough, the matches
-- older than what was walked, found through the trigram index and sorted. Each statement is
-- planned for its values (the pattern's rarity decides between the indexes).
-- p_user_ids: the users whose names match, for a search in bodies and names (NULL: bodies only).
CREATE FUNCTION notes_search(
    p_tenant bigint, p_viewer bigint, p_pattern text, p_user_ids bigint[], p_limit int,
    p_after_micros bigint, p_after_id bigint)
RETURNS TABLE (id bigint, body text, lat float8, lng float8, user_id bigint, username text,
               visibility text, place_id bigint, created_at timestamptz, updated_at timestamptz,
               created_micros bigint)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public, pg_temp SET plan_cache_mode = force_custom_plan
AS $$
DECLARE
    v_rows int := p_limit + 1;
    v_found int := 0;
    v_count int;
    v_walk int;
    -- Where the walk goes on from: the cursor first (none: after every note), then the
    -- last note each walk looked at.
    v_edge_at timestamptz := CASE WHEN p_after_micros IS NULL THEN 'infinity'
                                  ELSE timestamptz 'epoch' + p_after_micros * interval '1 microsecond' END;
    v_edge_id bigint := coalesce(p_after_id, 9223372036854775807);
BEGIN
    -- 1. The matches among the newest 1,000 notes past the cursor. 2. With at least 5 of them
    -- (1 in 200) but not a page, among the 15,000 after those.
    FOREACH v_walk IN ARRAY ARRAY[1000, 15000] LOOP
        RETURN QUERY
        SELECT n.id, n.body, ST_Y(n.location::geometry), ST_X(n.location::geometry), n.user_id, u.username,
               n.visibility, n.place_id, n.created_at, n.updated_at, (extract(epoch FROM n.created_at) * 1000000)::bigint
        FROM (
            SELECT w.* FROM (
                SELECT t.* FROM tenant_notes t
                WHERE t.tenant_id = p_tenant AND (t.created_at, t.id) < (v_edge_at, v_edge_id)
                ORDER BY t.created_at DESC, t.id DESC
                LIMIT v_walk
            ) w
            WHERE (w.visibility = 'public' OR w.user_id = p_viewer)
              AND (w.body ILIKE p_pattern OR w.user_id = ANY (p_user_ids))
            ORDER BY w.created_at DESC, w.id DESC
            LIMIT v_rows - v_found
        ) n
        JOIN tenant_users u ON u.tenant_id = p_tenant AND u.id = n.user_id
        ORDER BY n.created_at DESC, n.id DESC;
        GET DIAGNOSTICS v_count = ROW_COUNT;
        v_found := v_found + v_count;
        IF v_found = v_rows THEN RETURN; END IF;
        SELECT t.created_at, t.id INTO v_edge_at, v_edge_id FROM tenant_notes t
        WHERE t.tenant_id = p_tenant AND (t.created_at, t.id) < (v_edge_at, v_edge_id)
        ORDER BY t.created_at DESC, t.id DESC
        OFFSET v_walk - 1 LIMIT 1;
        IF NOT FOUND THEN RETURN; END IF;  -- no notes beyond the walk
        EXIT WHEN v_found < 5;  -- rare: the index finds the rest
    END LOOP;
    -- 3. Rare, or the walks were not enough: every match older than what was walked, through
    -- the index (a CTE without ORDER BY, so that an estimate cannot turn it back into a walk),
    -- then sorted.
    RETURN QUERY
    WITH matches AS MATERIALIZED (
        SELECT t.* FROM tenant_notes t
        WHERE t.tenant_id = p_tenant AND (t.created_at, t.id) < (v_edge_at, v_edge_id)
          AND (t.visibility = 'public' OR t.user_id = p_viewer)
          AND (t.body ILIKE p_pattern OR t.user_id = ANY (p_user_ids))
    )
    SELECT n.id, n.body, ST_Y(n.location::geometry), ST_X(n.location::geometry), n.user_id, u.username,
           n.visibility, n.place_id, n.created_at, n.updated_at, (extract(epoch FROM n.created_at) * 1000000)::bigint
    FROM (SELECT * FROM matches m ORDER BY m.created_at DESC, m.id DESC LIMIT v_rows - v_found) n
    JOIN tenant_users u ON u.tenant_id = p_tenant AND u.id = n.user_id
    ORDER BY n.created_at DESC, n.id DESC;
END $$;
REVOKE ALL ON FUNCTION notes_search(bigint, bigint, text, bigint[], int, bigint, bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION notes_search(bigint, bigint, text, bigint[], int, bigint, bigint) TO landmark_app;

-- The functions a top-level call of runs on the worker of the tenant its p_tenant names.
-- admin.distribute() delegates each; a later migration adds a row, not another distribute().
CREATE TABLE admin.tenant_functions (
    function regprocedure PRIMARY KEY,
    colocate_with regclass NOT NULL
);
INSERT INTO admin.tenant_functions VALUES
    ('event_probe(bigint,bigint)', 'events'),
    ('notes_nearest(bigint,bigint,float8,float8,float8,int,float8,bigint)', 'notes'),
    ('notes_search(bigint,bigint,text,bigint[],int,bigint,bigint)', 'notes');

-- Whether the service should read through the functions above: where every one of them is
-- delegated (on one server, never). The service asks once per process.
CREATE FUNCTION tenant_functions_delegated() RETURNS boolean
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public, pg_temp
AS $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN RETURN false; END IF;
    RETURN NOT EXISTS (
        SELECT FROM admin.tenant_functions f
        WHERE NOT EXISTS (SELECT FROM pg_dist_object d WHERE d.classid = 'pg_proc'::regclass
                          AND d.objid = f.function AND d.distribution_argument_index IS NOT NULL));
END $$;
GRANT EXECUTE ON FUNCTION tenant_functions_delegated() TO landmark_app;

-- admin.distribute() in steps, so that a later migration replaces the step it changes rather
-- than the whole of it (0016, 0018 and 0019 each restated it all). Each step is idempotent
-- and runs inside distribute(), with its settings.

-- The reference table, then every tenant table by tenant_id, colocated with users.
CREATE FUNCTION admin.distribute_tables() RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE v_table regclass;
BEGIN
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
END $$;

-- The functions that policies and triggers call run on the workers too. Citus copies a
-- function when it is created, unless it was created with copying off (0001) or before the
-- tables it follows were distributed.
CREATE FUNCTION admin.copy_functions_to_workers() RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE v_function regprocedure;
BEGIN
    FOR v_function IN
        SELECT p.oid::regprocedure FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname = 'public' AND p.proowner = current_user::regrole AND p.prokind = 'f'
          AND NOT EXISTS (SELECT FROM pg_dist_object d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid)
    LOOP
        PERFORM create_distributed_function(v_function);
        RETURN NEXT format('%s: on every node', v_function);
    END LOOP;
END $$;

-- A top-level SELECT f($1, …) of a function in admin.tenant_functions runs on the worker of
-- tenant $1 (force_delegation: also inside a transaction block): event_probe, so that its
-- snapshot, xids and ids are all that worker's; notes_nearest and notes_search, so that they
-- read as their owner there.
CREATE FUNCTION admin.delegate_tenant_functions() RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE v_function regprocedure; v_colocate regclass;
BEGIN
    FOR v_function, v_colocate IN SELECT function, colocate_with FROM admin.tenant_functions ORDER BY function::text LOOP
        IF NOT EXISTS (SELECT FROM pg_dist_object d WHERE d.classid = 'pg_proc'::regclass
                       AND d.objid = v_function AND d.distribution_argument_index IS NOT NULL) THEN
            PERFORM create_distributed_function(v_function, 'p_tenant',
                                                colocate_with := v_colocate::text, force_delegation := true);
            RETURN NEXT format('%s: run on the tenant''s worker', v_function);
        END IF;
    END LOOP;
END $$;

-- The rows copied into the shards stay on the coordinator's disk, unseen: free it, the tables
-- that refer to others first.
CREATE FUNCTION admin.free_coordinator_copies() RETURNS void
LANGUAGE plpgsql AS $$
DECLARE v_table regclass;
BEGIN
    FOR v_table IN SELECT t FROM tenant_tables() WITH ORDINALITY AS l(t, n) ORDER BY n DESC LOOP
        IF pg_relation_size(v_table) > 0 THEN
            PERFORM truncate_local_data_after_distributing_table(v_table);
        END IF;
    END LOOP;
END $$;

CREATE OR REPLACE FUNCTION admin.distribute() RETURNS SETOF text
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN RETURN; END IF;
    IF NOT EXISTS (SELECT FROM pg_dist_node WHERE noderole = 'primary' AND shouldhaveshards) THEN
        RAISE EXCEPTION 'no worker node: add workers with citus_add_node() first';
    END IF;
    -- tenants alone: by default Citus would turn every table with a foreign key to it
    -- into a coordinator-local table, and those with identity columns cannot be distributed.
    SET LOCAL citus.enable_local_reference_table_foreign_keys = off;
    SET LOCAL citus.multi_shard_modify_mode = 'sequential';
    RETURN QUERY SELECT * FROM admin.distribute_tables();
    RETURN QUERY SELECT * FROM admin.copy_functions_to_workers();
    RETURN QUERY SELECT * FROM admin.delegate_tenant_functions();
    EXECUTE format('ALTER DATABASE %I SET citus.propagate_set_commands = %L', current_database(), 'local');
    PERFORM admin.free_coordinator_copies();
END $$;
