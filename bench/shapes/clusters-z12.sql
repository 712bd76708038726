-- clusters-z12: GET /v1/notes/clusters?zoom=12&bbox=<a 1280x800 px screen over central London>
-- From the cluster grid: the statement is grid-clusters.sql.part.
-- pgbench-protocol: prepared
\set zoom 12
\set grid 16384
\set min_lng -0.1278 - 0.219727 + random(-2000, 2000) / 111320.0
\set max_lng :min_lng + 0.439453
\set min_lat 51.5074 - 0.085475 + random(-2000, 2000) / 111320.0
\set max_lat :min_lat + 0.170951
BEGIN;
SELECT set_config('app.tenant_id', :tenant, true);
-- @grid-clusters:
COMMIT;
