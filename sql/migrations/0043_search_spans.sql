-- Time windows of 8^level hours (issue 37's insert cost), in place of 0036's 4^level.
--
-- Every note had nine time keys in notes_search, one for each window of 4^level hours that
-- holds it (level 0 to 8). With bigrams kept to runs beyond ASCII (0041) they are most of
-- what an insert still pays for search beyond its trigrams: an ASCII insert cost 12 % more
-- CPU than 0032's path and 17 % more with the commit flushed, a Japanese one 26 %
-- (bench/results/2026-11-28-insert-functions.md); the target is 15 %. Windows of 8^level
-- hours (level 0 to 5: an hour, 8 hours, 64 (2.7 days), 512 (3 weeks), 4,096 (24 weeks) and
-- 32,768 (3.7 years)) need six keys. The search's first window is still the one expected to
-- hold about a page at the rate the walk of the newest notes saw, now rounded up to a power of
-- 8 rather than 4, and the windows after it widen by 8 at most (search_spans).
--
-- Keys: tenant_id * 2^28 + level * 2^24 + (hours since 1970 >> 3 * level), as 0036's with
-- three bits a level (search_hour gives the hour). New names, not 0036's, for the reason 0036
-- gives: a replica of the previous release runs 0036's statement while the upgrade rolls
-- through, and with 0036's functions kept it gets exactly its pages (its time keys no longer
-- have an index after 0044: it finds the word through the trigrams and tests the window in
-- the rows, slower, for that hour). 0036's functions stay until a later release drops them.
--
-- As in 0038 and 0041 the index is built beside the old one (writes wait, reads go on) and
-- 0044 swaps them. SQL bodies, as 0036's: they inline into the index expression.

-- The key of the window of 8^level hours that holds `hour`: the one place the layout above
-- is written, for the index (search_span_keys) and the search (search_spans).
CREATE FUNCTION search_span_key(tenant bigint, hour int, level int) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT tenant * 268435456 + level * 16777216 + (hour >> (3 * level))
$$;

-- A note's six keys.
CREATE FUNCTION search_span_keys(tenant bigint, t timestamptz) RETURNS bigint[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT ARRAY[public.search_span_key(tenant, public.search_hour(t), 0), public.search_span_key(tenant, public.search_hour(t), 1),
                 public.search_span_key(tenant, public.search_hour(t), 2), public.search_span_key(tenant, public.search_hour(t), 3),
                 public.search_span_key(tenant, public.search_hour(t), 4), public.search_span_key(tenant, public.search_hour(t), 5)]
$$;

-- The windows that cover [oldest, newest], newest first. The first is the one expected to
-- hold `wanted` matches at the rate seen: `seen` matches among the notes from `edge` to
-- `newest` (at least one is assumed, so a word the walk did not see starts wide). Each next
-- window ends the hour before the last one began and is as wide, or 8 times as wide where
-- that size's windows begin: at most 7 of a size before the next.
CREATE FUNCTION search_spans(
    tenant bigint, newest timestamptz, edge timestamptz, oldest timestamptz, seen bigint, wanted bigint
) RETURNS SETOF bigint
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE STRICT ROWS 6 AS $$
DECLARE
    hour int := public.search_hour(newest);
    last int := public.search_hour(oldest);
    hours float8 := greatest(date_part('epoch', newest - edge) / 3600 * wanted / greatest(seen, 1), 1);
    level int := least(5, ceil(ln(hours) / ln(8)))::int;
BEGIN
    RETURN NEXT public.search_span_key(tenant, hour, level);
    hour := ((hour >> (3 * level)) << (3 * level)) - 1;
    WHILE hour >= last LOOP
        IF level < 5 AND (hour + 1) % (1 << (3 * (level + 1))) = 0 THEN
            level := level + 1;
        END IF;
        RETURN NEXT public.search_span_key(tenant, hour, level);
        hour := hour - (1 << (3 * level));
    END LOOP;
END
$$;

CREATE INDEX notes_search_spans ON notes USING gin (
    search_span_keys(tenant_id, created_at), search_cell_keys(tenant_id, location),
    body_folded gin_trgm_ops, search_bigrams_beyond_ascii(body_folded));
