-- nearest 50 within 10 km, the viewer's private notes included (as the Vapor peer, which omits them).
SELECT n.id, n.body, ST_Y(n.location::geometry), ST_X(n.location::geometry), n.user_id, u.username,
       n.visibility, n.place_id, n.created_at, n.updated_at, n.distance
FROM (
    SELECT *, ST_Distance(location, ST_SetSRID(ST_MakePoint(:lng, :lat), 4326)::geography) AS distance
    FROM notes
    WHERE tenant_id = :tenant AND (visibility = 'public' OR user_id = :viewer)
      AND ST_DWithin(location, ST_SetSRID(ST_MakePoint(:lng, :lat), 4326)::geography, 10000)
    ORDER BY location <-> ST_SetSRID(ST_MakePoint(:lng, :lat), 4326)::geography
    LIMIT 51
) n
JOIN users u ON u.tenant_id = n.tenant_id AND u.id = n.user_id
ORDER BY n.distance, n.id;
