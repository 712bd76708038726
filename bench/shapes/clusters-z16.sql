-- clusters-z16: GET /v1/notes/clusters?zoom=16&bbox=<a 1280x800 px screen over central London>
-- From the cluster grid: the statement is grid-clusters.sql.part.
-- pgbench-protocol: prepared
\set zoom 16
\set grid 262144
\set min_lng -0.1278 - 0.013733 + random(-2000, 2000) / 111320.0
\set max_lng :min_lng + 0.027466
\set min_lat 51.5074 - 0.005342 + random(-2000, 2000) / 111320.0
\set max_lat :min_lat + 0.010684
BEGIN;
SELECT set_config('app.tenant_id', :tenant, true);
-- @grid-clusters:
COMMIT;
