-- floor: the transaction around every shape with a trivial statement (BEGIN, set_config, SELECT 1, COMMIT):
-- what a shape costs before its own query does anything (round trips, pgbench, the shared machine).
-- pgbench-protocol: prepared
BEGIN;
SELECT set_config('app.tenant_id', :tenant, true);
SELECT 1;
COMMIT;
