-- Newest-first search whose cost follows the page, not the number of matches (issue 37).
--
-- A word too rare for the newest-first walk (NoteStore.newestStatement) was found through
-- the text index: every match of the tenant, fetched and sorted, to keep the newest 51. At
-- ten million notes that was 5,000 rows for `axolotl` (42 ms) and 20,000 for `zeppelin`
-- (112 ms). Now the text indexes also key each note by when it was written, and the
-- statement asks them one time window at a time, newest first, until the page is full:
-- the rows it fetches are the page's and those of the last window it needed.
--
-- Windows: a note's week since 1970 (UTC), its block of 4 weeks and its block of 16, as
-- three keys of its tenant: tenant_id * 2^24, plus 0, 2^22 or 2^23 for the size, plus the
-- week or block number (weeks since 1970 stay below 2^22 for 80,000 years; tenant ids below
-- 2^39). search_windows(tenant, newest, oldest) lists the keys that cover [oldest, newest]
-- newest first, widening: single weeks down to a 4-week boundary, 4-week blocks down to a
-- 16-week one, then 16-week blocks (a year: at most 3 + 3 + 4 windows). A window with no
-- match costs one short GIN scan; the matches in a window lie in one run of the heap, as
-- notes arrive in time order.
--
-- The tenant is inside the keys, not a column of the index. A key on tenant_id alone has
-- every note of a large tenant in its posting tree, and GIN decodes a leaf page of it for
-- each candidate row: 2.8 ms to intersect it with one week and `axolotl` (4 rows) against
-- 0.2 ms without it, on a million notes (bench/results/2026-11-28-search.md). A search
-- without a window (a word in a viewport, nearest first) finds the word in every tenant
-- and keeps its own tenant's rows: such a search asks the index only for a word too rare
-- to find by walking.
--
-- The functions are named with their schema: pg_restore rebuilds the index with an empty
-- search_path, and an unqualified call failed the restore (and the grants after it).
-- The arithmetic is immutable (an interval since the epoch, not extract(epoch FROM t),
-- which is only stable), so these SQL functions are inlined into the index expression and
-- its rechecks (search_week: 1 µs a row, against 70 µs as a function call).
CREATE FUNCTION search_week(t timestamptz) RETURNS int
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$
    SELECT floor(date_part('epoch', t - timestamptz '1970-01-01 00:00:00+00') / 604800)::int
$$;

-- The key of the window of `weeks` (1, 4 or 16) weeks that holds `week`: the one place the
-- layout above is written, for the index (search_time_keys) and the search (search_windows).
-- Not STRICT: PostgreSQL inlines a STRICT SQL function only if its body is strict, and a
-- CASE is not (declared STRICT, search_time_keys took 78 µs a row instead of 7.4). A NULL
-- argument still gives NULL, through the arithmetic.
CREATE FUNCTION search_window_key(tenant bigint, week int, weeks int) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT tenant * 16777216 + CASE weeks WHEN 1 THEN 0 WHEN 4 THEN 4194304 ELSE 8388608 END + week / weeks
$$;

CREATE FUNCTION search_time_keys(tenant bigint, t timestamptz) RETURNS bigint[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$
    SELECT ARRAY[public.search_window_key(tenant, public.search_week(t), 1),
                 public.search_window_key(tenant, public.search_week(t), 4),
                 public.search_window_key(tenant, public.search_week(t), 16)]
$$;

CREATE FUNCTION search_windows(tenant bigint, newest timestamptz, oldest timestamptz) RETURNS SETOF bigint
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE STRICT ROWS 10 AS $$
DECLARE
    week int := public.search_week(newest);
    last int := public.search_week(oldest);
    weeks int;
BEGIN
    WHILE week >= last LOOP
        -- The widest window whose last week this is.
        weeks := CASE WHEN (week + 1) % 16 = 0 THEN 16 WHEN (week + 1) % 4 = 0 THEN 4 ELSE 1 END;
        RETURN NEXT public.search_window_key(tenant, week, weeks);
        week := week - weeks;
    END LOOP;
END
$$;

-- The text indexes again, as one: time keys, the folded text's trigrams and its bigrams.
-- One index, so that a window's condition on the time keys is only ever asked together
-- with the text's (with two indexes that both held the keys, the planner read a whole
-- window through the one that did not hold the word, 100,000 rows for 20), and so that an
-- insert updates one GIN index instead of two.
CREATE INDEX notes_search ON notes USING gin (
    search_time_keys(tenant_id, created_at), body_folded gin_trgm_ops, search_bigrams(body_folded));
DROP INDEX notes_body_folded_trgm;
DROP INDEX notes_body_folded_bigrams;
