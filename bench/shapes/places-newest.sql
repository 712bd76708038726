-- places-newest: GET /v1/places?limit=50
-- pgbench-protocol: prepared
\set lim 51
BEGIN;
SELECT set_config('app.tenant_id', :tenant, true);
SELECT p.id, p.name, ST_Y(p.location::geometry), ST_X(p.location::geometry), p.kind, p.created_by,
       (SELECT count(*) FROM tenant_notes n
        WHERE n.tenant_id = p.tenant_id AND n.place_id = p.id AND (n.visibility = 'public' OR n.user_id = :viewer)),
       p.created_at, (extract(epoch FROM p.created_at) * 1000000)::bigint
FROM tenant_places p
WHERE p.tenant_id = :tenant
ORDER BY p.created_at DESC, p.id DESC
LIMIT :lim;
COMMIT;
