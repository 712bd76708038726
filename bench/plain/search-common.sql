-- Text search for "coffee": the newest 50 (+1) notes whose body or author's username contains it.
SELECT n.id, n.body, ST_Y(n.location::geometry), ST_X(n.location::geometry), n.user_id, u.username,
       n.visibility, n.place_id, n.created_at, n.updated_at
FROM (
    SELECT * FROM notes
    WHERE tenant_id = :tenant AND (visibility = 'public' OR user_id = :viewer)
      AND (body ILIKE '%coffee%'
           OR user_id IN (SELECT id FROM users WHERE tenant_id = :tenant AND username ILIKE '%coffee%'))
    ORDER BY created_at DESC, id DESC
    LIMIT 51
) n
JOIN users u ON u.tenant_id = n.tenant_id AND u.id = n.user_id
ORDER BY n.created_at DESC, n.id DESC;
