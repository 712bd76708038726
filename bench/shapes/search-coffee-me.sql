-- search-coffee-me: GET /v1/notes?q=coffee&in=body&author=me&limit=50
-- pgbench-protocol: extended
\set lim 51
\set radius 10000
\set walk 2000
\set nwalk 500
BEGIN;
SELECT set_config('app.tenant_id', :tenant, true);
SELECT n.id, n.body, ST_Y(n.location::geometry), ST_X(n.location::geometry), n.user_id, u.username,
       n.visibility, n.place_id, n.created_at, n.updated_at, (extract(epoch FROM n.created_at) * 1000000)::bigint
FROM (
    SELECT n.* FROM tenant_notes n
    WHERE n.tenant_id = :tenant
  AND (n.visibility = 'public' OR n.user_id = :viewer)
  AND n.body_folded LIKE '%coffee%'
  AND n.user_id = :viewer
    ORDER BY n.created_at DESC, n.id DESC
    LIMIT :lim
) n
JOIN tenant_users u ON u.tenant_id = n.tenant_id AND u.id = n.user_id
ORDER BY n.created_at DESC, n.id DESC;
COMMIT;
