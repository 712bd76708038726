-- :n public notes by kim.20 of tenant :tenant saying :'body', uniform over a 10 km square
-- around London: the notes bench/push.sh and bench/push-delivery.sh match against watches.
INSERT INTO notes (tenant_id, user_id, body, location)
SELECT :tenant, (SELECT id FROM users WHERE tenant_id = :tenant AND username = 'kim.20'), :'body',
       ST_SetSRID(ST_MakePoint(-0.1278 + (random() - 0.5) * 10000 / 111320.0 * 1.606648816,
                               51.5074 + (random() - 0.5) * 10000 / 111320.0), 4326)::geography
FROM generate_series(1, :n);
