-- One copy of each read statement (issue 33). Migration 0020 wrote the unfiltered nearest
-- page and the plain text search a second time, in PL/pgSQL, for Citus, where only a
-- function delegated to the tenant's worker reads them as its owner, through the indexes;
-- a test kept the two copies equal. Now the service's statements are the one definition:
-- `landmark-remark distribute` installs each statement shape that reads on the worker as a
-- function whose body is that statement's text (admin.install_statement_function below),
-- named by a fingerprint of the text, its parameter types and its planning. The service calls
-- the function its statement fingerprints to, when statement_functions() lists it, and sends
-- the statement otherwise; so it never runs a body other than the statement it would send.
DELETE FROM admin.tenant_functions
WHERE function IN ('notes_nearest(bigint,bigint,float8,float8,float8,int,float8,bigint)'::regprocedure,
                   'notes_search(bigint,bigint,text,bigint[],int,bigint,bigint)'::regprocedure);
DROP FUNCTION notes_nearest(bigint, bigint, float8, float8, float8, int, float8, bigint);
DROP FUNCTION notes_search(bigint, bigint, text, bigint[], int, bigint, bigint);
DROP FUNCTION tenant_functions_delegated();

-- The statement functions installed, whether delegated or not.
CREATE TABLE admin.statement_functions (
    function regprocedure PRIMARY KEY,
    installed_at timestamptz NOT NULL DEFAULT now()
);

-- Installs one statement as a function (or finds it installed) and, on Citus, delegates it
-- to the worker of its first argument, p_tenant. The statement's own parameters follow it
-- ($2 …, of p_parameter_types), its rows are the function's (of p_column_types). The body
-- runs as RETURN QUERY in PL/pgSQL, which keeps the statement's plan for the session as a
-- prepared statement would, or plans each run for its values (p_plans_each_run, for the
-- statements the service does not prepare). Returns what it did, or nothing when the
-- function was there already.
CREATE FUNCTION admin.install_statement_function(
    p_name text, p_parameter_types oid[], p_column_types oid[], p_body text, p_plans_each_run boolean,
    p_colocate_with regclass)
RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    v_types text := (SELECT string_agg(', ' || format_type(t, NULL), '' ORDER BY n)
                     FROM unnest(p_parameter_types) WITH ORDINALITY u(t, n));
    v_columns text := (SELECT string_agg(format('column_%s %s', n, format_type(t, NULL)), ', ' ORDER BY n)
                       FROM unnest(p_column_types) WITH ORDINALITY u(t, n));
    v_function regprocedure;
    v_citus boolean := EXISTS (SELECT FROM pg_extension WHERE extname = 'citus');
    v_done text;
BEGIN
    -- The name is made of a prefix and a fingerprint: nothing else is installed this way.
    IF p_name !~ '^[a-z][a-z_]*_[0-9a-f]{16}$' THEN
        RAISE EXCEPTION 'not a statement function''s name: %', p_name;
    END IF;
    -- Two installs at once (two distributes) would both create it.
    PERFORM pg_advisory_xact_lock(hashtext('admin.install_statement_function'));
    v_function := to_regprocedure(format('%I(bigint%s)', p_name, coalesce(v_types, '')));
    IF v_function IS NULL THEN
        EXECUTE format(
            'CREATE FUNCTION %I(p_tenant bigint%s) RETURNS TABLE (%s) '
            'LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public, pg_temp %s AS %L',
            p_name, coalesce(v_types, ''), v_columns,
            CASE WHEN p_plans_each_run THEN 'SET plan_cache_mode = force_custom_plan' ELSE '' END,
            -- The columns' names are the function's variables too: the statement's own win.
            E'#variable_conflict use_column\nBEGIN\nRETURN QUERY\n' || p_body || E';\nEND');
        v_function := to_regprocedure(format('%I(bigint%s)', p_name, coalesce(v_types, '')));
        EXECUTE format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', v_function);
        EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO landmark_app', v_function);
        INSERT INTO admin.statement_functions (function) VALUES (v_function);
        v_done := format('%s: installed', p_name);
    END IF;
    -- Apart: off Citus, a statement naming pg_dist_object would not even plan.
    IF v_citus THEN
        IF NOT EXISTS (SELECT FROM pg_dist_object d WHERE d.classid = 'pg_proc'::regclass
                       AND d.objid = v_function AND d.distribution_argument_index IS NOT NULL) THEN
            PERFORM create_distributed_function(v_function, 'p_tenant',
                                                colocate_with := p_colocate_with::text, force_delegation := true);
            v_done := format('%s: run on the tenant''s worker', p_name);
        END IF;
    END IF;
    RETURN v_done;
END $$;

-- The statement functions the service should call: those delegated to the tenants' workers
-- (none off Citus, where a statement costs less than its function).
CREATE FUNCTION statement_functions() RETURNS SETOF text
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public, pg_temp
AS $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN RETURN; END IF;
    RETURN QUERY
    SELECT p.proname::text FROM admin.statement_functions f
    JOIN pg_proc p ON p.oid = f.function
    WHERE EXISTS (SELECT FROM pg_dist_object d WHERE d.classid = 'pg_proc'::regclass
                  AND d.objid = f.function AND d.distribution_argument_index IS NOT NULL);
END $$;
REVOKE ALL ON FUNCTION statement_functions() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION statement_functions() TO landmark_app;
