-- Text search for "axolotl": the newest 50 (+1) notes whose body contains it. The service
-- also matches authors' usernames; no username contains "axolotl" (the plain check compares
-- the rows), and written as an OR with a subquery over users PostgreSQL walks the whole
-- table (50 ms a search at 1M notes), which is no floor.
SELECT n.id, n.body, ST_Y(n.location::geometry), ST_X(n.location::geometry), n.user_id, u.username,
       n.visibility, n.place_id, n.created_at, n.updated_at
FROM (
    SELECT * FROM notes
    WHERE tenant_id = :tenant AND (visibility = 'public' OR user_id = :viewer) AND body_folded LIKE '%axolotl%'
    ORDER BY created_at DESC, id DESC
    LIMIT 51
) n
JOIN users u ON u.tenant_id = n.tenant_id AND u.id = n.user_id
ORDER BY n.created_at DESC, n.id DESC;
