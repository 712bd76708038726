-- The newest 50 (+1) notes in a city's bounding box.
SELECT n.id, n.body, ST_Y(n.location::geometry), ST_X(n.location::geometry), n.user_id, u.username,
       n.visibility, n.place_id, n.created_at, n.updated_at
FROM (
    SELECT * FROM notes
    WHERE tenant_id = :tenant AND (visibility = 'public' OR user_id = :viewer)
      AND location::geometry && ST_MakeEnvelope(:min_lng, :min_lat, :max_lng, :max_lat, 4326)
    ORDER BY created_at DESC, id DESC
    LIMIT 51
) n
JOIN users u ON u.tenant_id = n.tenant_id AND u.id = n.user_id
ORDER BY n.created_at DESC, n.id DESC;
