-- username-rare: GET /v1/notes?q=mia.1234&in=username&limit=50 (usernames resolved first, then notes by user_id)
-- pgbench-protocol: extended
\set lim 51
\set radius 10000
\set walk 2000
\set nwalk 500
BEGIN;
SELECT set_config('app.tenant_id', :tenant, true);
SELECT coalesce(array_agg(u.id), '{}')::text AS ids FROM (SELECT u.id FROM tenant_users u
WHERE u.tenant_id = :tenant AND u.username_folded LIKE '%mia.1234%' LIMIT 201) u \gset
SELECT n.id, n.body, ST_Y(n.location::geometry), ST_X(n.location::geometry), n.user_id, u.username,
       n.visibility, n.place_id, n.created_at, n.updated_at, (extract(epoch FROM n.created_at) * 1000000)::bigint
FROM (
    SELECT n.* FROM tenant_notes n
    WHERE n.tenant_id = :tenant
  AND (n.visibility = 'public' OR n.user_id = :viewer)
  AND n.user_id = ANY (:ids::int8[])
    ORDER BY n.created_at DESC, n.id DESC
    LIMIT :lim
) n
JOIN tenant_users u ON u.tenant_id = n.tenant_id AND u.id = n.user_id
ORDER BY n.created_at DESC, n.id DESC;
COMMIT;
