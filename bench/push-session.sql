-- bench/push.sh's second measure: the database time of a note's insert with matching and
-- without, in one warm session (no network, no commit, no pgbench), 200 inserts near London
-- per round, three rounds alternating; everything rolled back. Run as the tables' owner (it
-- turns the trigger off inside its transaction), with -v tenant=<the bench tenant's id>.
\set ON_ERROR_STOP 1
\pset footer off
SELECT id AS author FROM users WHERE tenant_id = :tenant AND username = 'kim.20' \gset
CREATE TEMP TABLE timings (round int, matching bool, ms float8);
CREATE FUNCTION pg_temp.timed(p_tenant bigint, p_author bigint, p_n int) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz := clock_timestamp();
BEGIN
  FOR i IN 1..p_n LOOP
    INSERT INTO notes (tenant_id, user_id, body, location, visibility)
    VALUES (p_tenant, p_author, 'session bench', ST_SetSRID(ST_MakePoint(-0.1278 + (random() - 0.5) * 10000 / 111320.0 * 1.606648816, 51.5074 + (random() - 0.5) * 10000 / 111320.0), 4326)::geography, 'public');
  END LOOP;
  RETURN extract(epoch FROM clock_timestamp() - t0) * 1000 / p_n;
END $$;
-- Three rounds, each with matching, then without (the trigger off).
CREATE FUNCTION pg_temp.alternate(p_tenant bigint, p_author bigint) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  FOR r IN 1..3 LOOP
    INSERT INTO timings SELECT r, true, pg_temp.timed(p_tenant, p_author, 200);
    ALTER TABLE notes DISABLE TRIGGER notes_push_inserted;
    INSERT INTO timings SELECT r, false, pg_temp.timed(p_tenant, p_author, 200);
    ALTER TABLE notes ENABLE TRIGGER notes_push_inserted;
  END LOOP;
END $$;
BEGIN;
-- A warm-up: PostGIS's caches, the plans.
SELECT pg_temp.timed(:tenant, :author, 50) \gset warm_
SELECT set_config('app.tenant_id', :'tenant', true);
SELECT pg_temp.alternate(:tenant, :author);
SELECT round, round(max(ms) FILTER (WHERE matching)::numeric, 3) AS with_ms, round(max(ms) FILTER (WHERE NOT matching)::numeric, 3) AS without_ms FROM timings GROUP BY round ORDER BY round;
ROLLBACK;
