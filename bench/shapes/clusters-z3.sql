-- clusters-z3: GET /v1/notes/clusters?zoom=3&bbox=<-25,34,45,72: Europe, ~75% of the notes>
-- From the cluster grid: the statement is grid-clusters.sql.part.
-- pgbench-protocol: prepared
\set zoom 3
\set grid 32
\set min_lng -25
\set max_lng 45
\set min_lat 34
\set max_lat 72
BEGIN;
SELECT set_config('app.tenant_id', :tenant, true);
-- @grid-clusters:
COMMIT;
