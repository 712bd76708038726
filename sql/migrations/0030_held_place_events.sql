-- A place held for a moderator, or released, is gone from, or new to, everyone else's map,
-- as a held note is (0024). Until now its update went to everyone as `place.updated`, which a
-- stream sends only to those who may see it (the place read when sent): the others kept the
-- place on their maps. Now a hold is a `place.deleted` for everyone but its creator, and a
-- release a `place.updated` marked as new to the others (sent to them as `place.created`).
CREATE FUNCTION place_audience(p places) RETURNS text
LANGUAGE sql IMMUTABLE AS $$ SELECT CASE WHEN p.moderation IS NOT NULL THEN 'owner' ELSE 'all' END $$;

CREATE FUNCTION places_updated_events() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM append_events(ARRAY(
        SELECT change FROM (
            SELECT p.tenant_id, p.id, 1 AS step,
                   ROW(p.tenant_id, 'place.deleted', p.id, p.created_by, 'others', false, o.location)::event_change AS change
            FROM new_rows p JOIN old_rows o ON o.tenant_id = p.tenant_id AND o.id = p.id
            WHERE place_audience(o) = 'all' AND place_audience(p) = 'owner'
            UNION ALL
            SELECT p.tenant_id, p.id, 2,
                   ROW(p.tenant_id, 'place.updated', p.id, p.created_by, place_audience(p),
                       place_audience(o) = 'owner' AND place_audience(p) = 'all', p.location)::event_change
            FROM new_rows p JOIN old_rows o ON o.tenant_id = p.tenant_id AND o.id = p.id
        ) changes ORDER BY tenant_id, id, step));
    RETURN NULL;
END $$;

DROP TRIGGER places_updated_events ON places;
CREATE TRIGGER places_updated_events AFTER UPDATE ON places REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
FOR EACH STATEMENT EXECUTE FUNCTION places_updated_events();
