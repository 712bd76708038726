-- Push notifications (issue 39), second part: a new note is matched against the watches as
-- it is written, by the watches' spatial index, in the note's own transaction. What matches
-- is queued in push_matches for the senders; the write waits for no delivery.
--
-- A note is pushed once to each watcher: watches of one user that overlap make one match,
-- titled by the smallest (the most particular: "Home" before "Sydney"). It is matched
-- when it is written public, or when it becomes public (private → public, or released by a
-- moderator), never again after that (the unique key), and never:
--   * to its author;
--   * to a watcher who does not see it (a block either way, the watcher's report of the
--     author or of the note: hidden_authors, 0029, and reports);
--   * while it or its author is held for a moderator, or its author is disabled;
--   * to a watcher with no device (nothing could be sent), or a disabled one.
-- What can change between the match and the send (a block, a deleted note or watch, the
-- device, the watcher's quiet hours and hourly cap) the sender checks again.

CREATE TABLE push_matches (
    tenant_id bigint NOT NULL,
    id bigint GENERATED ALWAYS AS IDENTITY,
    user_id bigint NOT NULL,
    watch_id bigint NOT NULL,
    note_id bigint NOT NULL,
    author_id bigint NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    -- pending: to send; sent: pushed; collapsed: counted into a later summary push (the
    -- hourly cap); dropped: not to be sent (what the sender found changed, or no device left).
    state text NOT NULL DEFAULT 'pending' CONSTRAINT push_matches_state CHECK (state IN ('pending', 'sent', 'collapsed', 'dropped')),
    finished_at timestamptz,
    PRIMARY KEY (tenant_id, id)
);
SELECT admin.distribute_new_table('push_matches');
-- A user, a watch or a note deleted takes its matches with it: nothing is sent for them.
ALTER TABLE push_matches ADD FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE;
ALTER TABLE push_matches ADD FOREIGN KEY (tenant_id, watch_id) REFERENCES watches (tenant_id, id) ON DELETE CASCADE;
ALTER TABLE push_matches ADD FOREIGN KEY (tenant_id, note_id) REFERENCES notes (tenant_id, id) ON DELETE CASCADE;
CREATE UNIQUE INDEX push_matches_once ON push_matches (tenant_id, note_id, user_id);
CREATE INDEX push_matches_pending ON push_matches (tenant_id, user_id, id) WHERE state = 'pending';
CREATE INDEX push_matches_watch ON push_matches (tenant_id, watch_id);
ALTER TABLE push_matches ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON push_matches USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
GRANT SELECT, INSERT, UPDATE, DELETE ON push_matches TO landmark_app;

-- A watch is added with INSERT … SELECT (the limit counted in the same statement), which
-- Citus runs on the coordinator, taking the id from the sequence there as the service's role.
GRANT USAGE ON SEQUENCE watches_id_seq TO landmark_app;

-- A note as the matching reads it.
CREATE TYPE push_note AS (id bigint, user_id bigint, location geography);
CREATE TYPE push_match AS (user_id bigint, watch_id bigint, note_id bigint, author_id bigint);

-- The matches of one tenant's notes. Gathered into an array, then inserted from it, as the
-- grid's triggers do (0016): on Citus each statement names the tenant and stays on its shard.
CREATE FUNCTION match_watches(p_tenant bigint, p_notes push_note[]) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
DECLARE
    v_matches push_match[];
BEGIN
    v_matches := ARRAY(
        SELECT DISTINCT ON (w.user_id, n.id) ROW(w.user_id, w.id, n.id, n.user_id)::push_match
        FROM unnest(p_notes) AS n
        JOIN watches w ON w.tenant_id = p_tenant AND w.reach && n.location AND ST_DWithin(w.center, n.location, w.radius_m::float8)
        WHERE w.user_id <> n.user_id
          -- As the watcher's reads see it (Audience.seesNote): no block either way, no report
          -- of the author or of the note by the watcher, the author not held.
          AND NOT EXISTS (SELECT FROM hidden_authors h WHERE h.tenant_id = p_tenant AND h.viewer_id = w.user_id AND h.author_id = n.user_id)
          AND NOT EXISTS (
              SELECT FROM reports r
              WHERE r.tenant_id = p_tenant AND r.reporter_id = w.user_id AND r.target_type = 'note' AND r.target_id = n.id)
          AND NOT EXISTS (SELECT FROM users a WHERE a.tenant_id = p_tenant AND a.id = n.user_id AND a.moderation IS NOT NULL)
          AND EXISTS (SELECT FROM devices d WHERE d.tenant_id = p_tenant AND d.user_id = w.user_id)
          AND EXISTS (SELECT FROM users u WHERE u.tenant_id = p_tenant AND u.id = w.user_id AND u.disabled_at IS NULL)
        ORDER BY w.user_id, n.id, w.radius_m, w.id);
    IF cardinality(v_matches) = 0 THEN RETURN; END IF;
    INSERT INTO push_matches (tenant_id, user_id, watch_id, note_id, author_id)
    SELECT p_tenant, m.user_id, m.watch_id, m.note_id, m.author_id FROM unnest(v_matches) AS m
    ON CONFLICT (tenant_id, note_id, user_id) DO NOTHING;
END $$;

CREATE FUNCTION notes_push_inserted() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
DECLARE
    v_tenant bigint;
    v_notes push_note[];
BEGIN
    FOR v_tenant, v_notes IN
        SELECT n.tenant_id, array_agg(ROW(n.id, n.user_id, n.location)::push_note)
        FROM new_rows n
        WHERE n.visibility = 'public' AND n.moderation IS NULL AND NOT n.author_disabled
        GROUP BY n.tenant_id
    LOOP
        PERFORM match_watches(v_tenant, v_notes);
    END LOOP;
    RETURN NULL;
END $$;

-- Becoming public, or released by a moderator: matched as if new. A note moved, or its
-- author's account enabled again, is not news.
CREATE FUNCTION notes_push_updated() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
DECLARE
    v_tenant bigint;
    v_notes push_note[];
BEGIN
    FOR v_tenant, v_notes IN
        SELECT n.tenant_id, array_agg(ROW(n.id, n.user_id, n.location)::push_note)
        FROM new_rows n JOIN old_rows o ON o.tenant_id = n.tenant_id AND o.id = n.id
        WHERE n.visibility = 'public' AND n.moderation IS NULL AND NOT n.author_disabled
          AND (o.visibility <> 'public' OR o.moderation IS NOT NULL)
        GROUP BY n.tenant_id
    LOOP
        PERFORM match_watches(v_tenant, v_notes);
    END LOOP;
    RETURN NULL;
END $$;

CREATE TRIGGER notes_push_inserted AFTER INSERT ON notes REFERENCING NEW TABLE AS new_rows
FOR EACH STATEMENT EXECUTE FUNCTION notes_push_inserted();
CREATE TRIGGER notes_push_updated AFTER UPDATE ON notes REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
FOR EACH STATEMENT EXECUTE FUNCTION notes_push_updated();
