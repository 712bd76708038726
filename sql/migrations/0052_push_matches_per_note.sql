-- Push notifications (issue 39): matching made cheap enough for the write (benchmark:
-- bench/results/2026-11-29-push-matching.md). 0049 wrote one push_matches row per watcher,
-- each with three foreign-key checks and four index entries, after probing each candidate
-- watch for a device, a block, a report and its user's state: 2.3-4.1 ms more per note with
-- 100,000 watches, against a budget of 1 ms. Now the write keeps only what needs the spatial
-- index at that moment:
--   * the watches' index probe and the geodesic test, one match per watcher under their
--     smallest watch, never the author (as 0049);
--   * into one push_notes row per note: the watchers and their watches as two arrays, with no
--     foreign key and no index but the key;
--   * only in a tenant that can push (APNs credentials set): a tenant without them pays
--     nothing for watches it cannot serve.
-- The sender expands the rows into push_matches (expand_push_notes below), where the other
-- rules of 0049 apply: no match for a watcher who does not see the note or its author, whose
-- account is disabled or who has no device, nor for a note or author held. The unique key of
-- push_matches still makes a note pushed once to each watcher, however often it becomes
-- public.

CREATE TABLE push_notes (
    tenant_id bigint NOT NULL,
    id bigint GENERATED ALWAYS AS IDENTITY,
    note_id bigint NOT NULL,
    -- watchers[i] watches the note through watches[i].
    watchers bigint[] NOT NULL,
    watches bigint[] NOT NULL CHECK (cardinality(watches) = cardinality(watchers)),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id)
);
SELECT admin.distribute_new_table('push_notes');
ALTER TABLE push_notes ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON push_notes USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
GRANT SELECT ON push_notes TO landmark_app;

DROP TRIGGER notes_push_inserted ON notes;
DROP TRIGGER notes_push_updated ON notes;
DROP FUNCTION notes_push_inserted();
DROP FUNCTION notes_push_updated();
DROP FUNCTION match_watches(bigint, push_note[]);
DROP TYPE push_note;
DROP TYPE push_match;

-- A note that is news for watchers, with its tenant, as the triggers pass it on.
CREATE TYPE push_note AS (tenant_id bigint, id bigint, user_id bigint, location geography);
CREATE TYPE push_note_watchers AS (note_id bigint, watchers bigint[], watches bigint[]);

-- The watchers of the notes, tenant by tenant. Gathered into an array, then inserted from it,
-- as the grid's triggers do (0016): on Citus each statement names the tenant and stays on its
-- shard.
CREATE FUNCTION match_watches(p_notes push_note[]) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
DECLARE
    v_tenant bigint;
    v_matched push_note_watchers[];
BEGIN
    FOR v_tenant IN SELECT DISTINCT n.tenant_id FROM unnest(p_notes) AS n LOOP
        CONTINUE WHEN NOT EXISTS (SELECT FROM tenants t WHERE t.id = v_tenant AND t.apns_team_id IS NOT NULL);
        v_matched := ARRAY(
            -- Both arrays are aggregated in one pass, in the same order.
            SELECT ROW(n.id, array_agg(m.user_id), array_agg(m.watch_id))::push_note_watchers
            FROM unnest(p_notes) AS n
            CROSS JOIN LATERAL (
                SELECT DISTINCT ON (w.user_id) w.user_id, w.id AS watch_id
                FROM watches w
                WHERE w.tenant_id = v_tenant AND w.reach && n.location AND ST_DWithin(w.center, n.location, w.radius_m::float8)
                  AND w.user_id <> n.user_id
                ORDER BY w.user_id, w.radius_m, w.id) AS m
            WHERE n.tenant_id = v_tenant
            GROUP BY n.id);
        CONTINUE WHEN cardinality(v_matched) = 0;
        INSERT INTO push_notes (tenant_id, note_id, watchers, watches)
        SELECT v_tenant, m.note_id, m.watchers, m.watches FROM unnest(v_matched) AS m;
    END LOOP;
END $$;

-- A note written public (and neither it nor its author held or disabled) is news.
CREATE FUNCTION notes_push_inserted() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
BEGIN
    PERFORM match_watches(ARRAY(
        SELECT ROW(n.tenant_id, n.id, n.user_id, n.location)::push_note FROM new_rows n
        WHERE n.visibility = 'public' AND n.moderation IS NULL AND NOT n.author_disabled));
    RETURN NULL;
END $$;

-- So is one that becomes public, or is released by a moderator. A note moved, or its author's
-- account enabled again, is not.
CREATE FUNCTION notes_push_updated() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
BEGIN
    PERFORM match_watches(ARRAY(
        SELECT ROW(n.tenant_id, n.id, n.user_id, n.location)::push_note
        FROM new_rows n JOIN old_rows o ON o.tenant_id = n.tenant_id AND o.id = n.id
        WHERE n.visibility = 'public' AND n.moderation IS NULL AND NOT n.author_disabled
          AND (o.visibility <> 'public' OR o.moderation IS NOT NULL)));
    RETURN NULL;
END $$;

CREATE TRIGGER notes_push_inserted AFTER INSERT ON notes REFERENCING NEW TABLE AS new_rows
FOR EACH STATEMENT EXECUTE FUNCTION notes_push_inserted();
CREATE TRIGGER notes_push_updated AFTER UPDATE ON notes REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
FOR EACH STATEMENT EXECUTE FUNCTION notes_push_updated();

-- The sender, holding the tenant's queue, turns up to p_limit of its oldest push_notes into
-- push_matches, applying what the write left out (the header above), and returns how many
-- rows it took. A row a day old is old news: taken, nothing matched (as retention's rule for
-- push_matches, 0050). One INSERT … SELECT whose tables all join on the tenant: on Citus it
-- runs on the tenant's shard as it is (collected into an array of a composite type first, as
-- the triggers do, its parameters reached the worker untyped: 42P18).
CREATE FUNCTION expand_push_notes(p_tenant bigint, p_limit integer) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
DECLARE
    v_taken bigint[];
BEGIN
    v_taken := ARRAY(SELECT pn.id FROM push_notes pn WHERE pn.tenant_id = p_tenant ORDER BY pn.id LIMIT p_limit);
    IF cardinality(v_taken) = 0 THEN RETURN 0; END IF;
    INSERT INTO push_matches (tenant_id, user_id, watch_id, note_id, author_id, created_at)
    SELECT pn.tenant_id, m.user_id, m.watch_id, n.id, n.user_id, pn.created_at
    FROM push_notes pn
    CROSS JOIN LATERAL unnest(pn.watchers, pn.watches) AS m (user_id, watch_id)
    JOIN notes n ON n.tenant_id = pn.tenant_id AND n.id = pn.note_id
    JOIN watches w ON w.tenant_id = pn.tenant_id AND w.id = m.watch_id
    JOIN users wu ON wu.tenant_id = pn.tenant_id AND wu.id = m.user_id
    JOIN users a ON a.tenant_id = pn.tenant_id AND a.id = n.user_id
    WHERE pn.tenant_id = p_tenant AND pn.id = ANY(v_taken) AND pn.created_at > now() - interval '1 day'
      AND n.visibility = 'public' AND n.moderation IS NULL AND NOT n.author_disabled AND a.moderation IS NULL
      AND wu.disabled_at IS NULL
      AND EXISTS (SELECT FROM devices d WHERE d.tenant_id = pn.tenant_id AND d.user_id = m.user_id)
      -- As the watcher's reads see it (Audience.seesNote): no block either way, no report of
      -- the author or of the note by the watcher.
      AND NOT EXISTS (
          SELECT FROM hidden_authors h WHERE h.tenant_id = pn.tenant_id AND h.viewer_id = m.user_id AND h.author_id = n.user_id)
      AND NOT EXISTS (
          SELECT FROM reports r
          WHERE r.tenant_id = pn.tenant_id AND r.reporter_id = m.user_id AND r.target_type = 'note' AND r.target_id = n.id)
    ON CONFLICT (tenant_id, note_id, user_id) DO NOTHING;
    DELETE FROM push_notes pn WHERE pn.tenant_id = p_tenant AND pn.id = ANY(v_taken);
    RETURN cardinality(v_taken);
END $$;
REVOKE ALL ON FUNCTION expand_push_notes(bigint, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION expand_push_notes(bigint, integer) TO landmark_app;

-- The senders' tenants: pending matches due, or notes to expand.
CREATE OR REPLACE FUNCTION push_due_tenants(p_now timestamptz) RETURNS SETOF bigint
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public, pg_temp
AS $$
BEGIN
    RETURN QUERY
    SELECT m.tenant_id FROM push_matches m
    WHERE m.state = 'pending' AND m.next_attempt_at <= p_now
      AND m.tenant_id IN (SELECT t.id FROM tenants t WHERE t.apns_team_id IS NOT NULL AND t.disabled_at IS NULL)
    UNION
    SELECT pn.tenant_id FROM push_notes pn
    WHERE pn.tenant_id IN (SELECT t.id FROM tenants t WHERE t.apns_team_id IS NOT NULL AND t.disabled_at IS NULL);
END $$;

-- Retention (RetentionService, beside purge_push_records of 0050): push_notes a day old (a
-- tenant whose credentials were removed after the write) are deleted. The sender empties
-- push_notes within seconds, so the table is small and the write keeps it free of an index
-- for this.
CREATE FUNCTION purge_push_notes(p_batch bigint DEFAULT 10000) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
DECLARE v_notes bigint;
BEGIN
    WITH doomed AS (
        SELECT pn.tenant_id, pn.id FROM public.push_notes pn WHERE pn.created_at < now() - interval '1 day' LIMIT p_batch
    ), purged AS (
        DELETE FROM public.push_notes pn USING doomed d WHERE pn.tenant_id = d.tenant_id AND pn.id = d.id RETURNING 1
    )
    SELECT count(*) INTO v_notes FROM purged;
    RETURN v_notes;
END $$;
REVOKE ALL ON FUNCTION purge_push_notes(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION purge_push_notes(bigint) TO landmark_app;
