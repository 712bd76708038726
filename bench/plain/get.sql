-- One note by id.
SELECT n.id, n.body, ST_Y(n.location::geometry), ST_X(n.location::geometry), n.user_id, u.username,
       n.visibility, n.place_id, n.created_at, n.updated_at
FROM notes n
JOIN users u ON u.tenant_id = n.tenant_id AND u.id = n.user_id
WHERE n.tenant_id = :tenant AND n.id = :id AND (n.visibility = 'public' OR n.user_id = :viewer);
