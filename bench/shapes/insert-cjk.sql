-- insert-cjk: POST /v1/notes with a Japanese body (one note near London; its bigrams and trigrams are indexed)
-- pgbench-protocol: prepared
\set lat 51.5074 + random(-5000, 5000) / 111320.0
\set lng -0.1278 + random(-5000, 5000) / 111320.0 * 1.606648816
BEGIN;
SELECT set_config('app.tenant_id', :tenant, true);
WITH inserted AS (
    INSERT INTO notes (tenant_id, user_id, body, location, visibility, place_id)
    VALUES (:tenant, :viewer, 'ベンチマーク: 港のそばの喫茶店でコーヒー',
            ST_SetSRID(ST_MakePoint(:lng, :lat), 4326)::geography,
            'public', NULL)
    RETURNING *
)
SELECT n.id, n.body, ST_Y(n.location::geometry), ST_X(n.location::geometry), n.user_id, u.username,
       n.visibility, n.place_id, n.created_at, n.updated_at
FROM inserted n
JOIN users u ON u.tenant_id = n.tenant_id AND u.id = n.user_id;
COMMIT;
