-- Push notifications (issue 39): a user's quiet hours, in their time zone. No push is sent
-- inside the window; what matched meanwhile waits for its end, and goes then (as one summary
-- when there is more than the hour has room for). A window may cross midnight (22:00–07:00).
ALTER TABLE users ADD COLUMN time_zone text CONSTRAINT users_time_zone CHECK (char_length(time_zone) BETWEEN 1 AND 64);
ALTER TABLE users ADD COLUMN quiet_start time CONSTRAINT users_quiet_start CHECK (date_trunc('minute', quiet_start) = quiet_start);
ALTER TABLE users ADD COLUMN quiet_end time CONSTRAINT users_quiet_end CHECK (date_trunc('minute', quiet_end) = quiet_end);
ALTER TABLE users ADD CONSTRAINT users_quiet_hours CHECK ((quiet_start IS NULL) = (quiet_end IS NULL) AND (quiet_start IS NULL OR quiet_start <> quiet_end));

-- When the user's quiet hours end, if `p_at` falls inside them (NULL otherwise); UTC when the
-- user gave no time zone.
CREATE FUNCTION quiet_until(p_at timestamptz, p_zone text, p_start time, p_end time) RETURNS timestamptz
LANGUAGE sql STABLE
AS $$
    SELECT CASE
        WHEN p_start IS NULL THEN NULL
        WHEN (CASE WHEN p_start < p_end THEN local::time >= p_start AND local::time < p_end
                   ELSE local::time >= p_start OR local::time < p_end END)
        THEN ((CASE WHEN local::time >= p_end THEN local::date + 1 ELSE local::date END) + p_end) AT TIME ZONE zone
    END
    FROM (SELECT coalesce(p_zone, 'UTC') AS zone) z, LATERAL (SELECT p_at AT TIME ZONE z.zone AS local) l
$$;
