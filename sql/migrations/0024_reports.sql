-- Reports and automatic hiding (issue 34). A user reports a note, a place or a user; the
-- report hides its target from the reporter at once (the reads' Audience), and when the
-- target's open reports, one per reporter, reach the tenant's threshold, the target is held
-- for a moderator (`moderation = 'pending'`): hidden from everyone but its author.

-- How many distinct reporters hold a target for review.
ALTER TABLE tenants ADD COLUMN report_threshold integer NOT NULL DEFAULT 3
    CONSTRAINT tenants_report_threshold CHECK (report_threshold BETWEEN 1 AND 1000);

-- Held for a moderator: seen by its author (note, place) or by the user alone.
ALTER TABLE notes ADD COLUMN moderation text CONSTRAINT notes_moderation CHECK (moderation IN ('pending'));
ALTER TABLE places ADD COLUMN moderation text CONSTRAINT places_moderation CHECK (moderation IN ('pending'));
ALTER TABLE users ADD COLUMN moderation text CONSTRAINT users_moderation CHECK (moderation IN ('pending'));
-- The reads look up the held users of a tenant on every statement: few, through this.
CREATE INDEX users_held ON users (tenant_id) WHERE moderation IS NOT NULL;
CREATE INDEX notes_held ON notes (tenant_id) WHERE moderation IS NOT NULL;

-- The views name their columns when made: again, with the new one.
CREATE OR REPLACE VIEW tenant_notes AS
SELECT * FROM notes WHERE tenant_id = current_tenant_id() AND NOT author_disabled;
CREATE OR REPLACE VIEW tenant_places AS
SELECT * FROM places WHERE tenant_id = current_tenant_id();

-- A note held, or released, is gone from, or new to, everyone else's map as a note made
-- private or public is (0008, 0016): the events' audience follows both.
CREATE OR REPLACE FUNCTION note_audience(n notes) RETURNS text
LANGUAGE sql IMMUTABLE AS $$ SELECT CASE WHEN n.visibility = 'private' OR n.moderation IS NOT NULL THEN 'owner' ELSE 'all' END $$;

CREATE OR REPLACE FUNCTION notes_updated_events() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM append_events(ARRAY(
        SELECT change FROM (
            SELECT n.tenant_id, n.id, 1 AS step,
                   ROW(n.tenant_id, 'note.deleted', n.id, n.user_id, 'others', false, o.location)::event_change AS change
            FROM new_rows n JOIN old_rows o ON o.tenant_id = n.tenant_id AND o.id = n.id
            WHERE note_audience(o) = 'all' AND note_audience(n) = 'owner' AND o.author_disabled = n.author_disabled
            UNION ALL
            SELECT n.tenant_id, n.id, 2,
                   ROW(n.tenant_id, 'note.updated', n.id, n.user_id, note_audience(n),
                       note_audience(o) = 'owner' AND note_audience(n) = 'all', n.location)::event_change
            FROM new_rows n JOIN old_rows o ON o.tenant_id = n.tenant_id AND o.id = n.id
            WHERE o.author_disabled = n.author_disabled
        ) changes ORDER BY tenant_id, id, step));
    RETURN NULL;
END $$;

CREATE TABLE reports (
    tenant_id bigint NOT NULL,
    id bigint GENERATED ALWAYS AS IDENTITY,
    -- NULL once the reporter's account is deleted: the report stays, for the audit log.
    reporter_id bigint,
    target_type text NOT NULL CONSTRAINT reports_target_type CHECK (target_type IN ('note', 'place', 'user')),
    target_id bigint NOT NULL,
    reason text NOT NULL CONSTRAINT reports_reason CHECK (reason IN (
        'spam', 'harassment', 'hate', 'sexual', 'violence', 'self_harm', 'illegal', 'privacy', 'other')),
    detail text CONSTRAINT reports_detail CHECK (char_length(detail) BETWEEN 1 AND 500),
    state text NOT NULL DEFAULT 'open' CONSTRAINT reports_state CHECK (state IN ('open', 'actioned', 'dismissed')),
    created_at timestamptz NOT NULL DEFAULT now(),
    decided_at timestamptz,
    PRIMARY KEY (tenant_id, id)
);
SELECT admin.distribute_new_table('reports');
ALTER TABLE reports ADD FOREIGN KEY (tenant_id) REFERENCES tenants (id);
-- One open report per reporter and target: reporting again is the same report.
CREATE UNIQUE INDEX reports_one_open ON reports (tenant_id, reporter_id, target_type, target_id) WHERE state = 'open';
-- What the reporter reported, open or decided: hidden from them (every read).
CREATE INDEX reports_by_reporter ON reports (tenant_id, reporter_id, target_type, target_id);
-- GET /v1/me/reports, newest first, and a reporter's reports in the last hour.
CREATE INDEX reports_newest ON reports (tenant_id, reporter_id, created_at DESC, id DESC);
-- A target's open reports (the threshold) and the tenant's reports in the last hour.
CREATE INDEX reports_open_targets ON reports (tenant_id, target_type, target_id) WHERE state = 'open';
CREATE INDEX reports_recent ON reports (tenant_id, created_at);

ALTER TABLE reports ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON reports USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
GRANT SELECT, INSERT, UPDATE ON reports TO landmark_app;

-- A deleted account's reports lose their reporter (a column-list SET NULL foreign key is
-- what Citus refuses, 0016; a trigger, as for places' creators).
CREATE FUNCTION users_deleted_reports() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
BEGIN
    UPDATE reports SET reporter_id = NULL WHERE tenant_id = OLD.tenant_id AND reporter_id = OLD.id;
    RETURN OLD;
END $$;
CREATE TRIGGER users_deleted_reports BEFORE DELETE ON users FOR EACH ROW EXECUTE FUNCTION users_deleted_reports();
