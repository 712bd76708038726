-- Time windows sized to the word (issue 37), in place of 0035's weeks.
--
-- 0035 asked the text index one week at a time, widening to 4 and 16 weeks. That suits a
-- word of 1 note in 2,000: a week holds a page of it. A word of 1 in 100 (`great view`, 景色)
-- has ~200 matches in a week of a million notes and ~2,000 at ten million, too many to
-- fetch and sort for a page of 51, so such words were left to a walk of up to 16,000 notes
-- (12-19 ms at 1M). Now each note has a key for every window of 4^level hours (level 0 to
-- 8: an hour, 4 hours, 16, 64, 256, 1,024 (6 weeks), 4,096 (24 weeks), 16,384 (1.9 years)
-- and 65,536 (7.5 years)), and the search's first window is the one expected to hold about a
-- page at the rate the walk of the newest notes saw. A common word starts with an hour, a
-- rare one with months.
--
-- Keys: tenant_id * 2^28 + level * 2^24 + (hours since 1970 >> 2 * level). Hours fit 24
-- bits until the year 3884; tenant ids must stay below 2^35. A note written before 1970 (an
-- import) counts as hour 0. As in 0035 the tenant is inside the keys, not a column of the
-- index, and every call names its schema (pg_restore rebuilds the index with an empty
-- search_path).
--
-- New names, not 0035's: a replica of the previous release still runs 0035's statement
-- during a rolling upgrade, and with 0035's functions kept it still gets exactly its pages
-- (its time keys no longer have an index, so it finds the word through the trigrams of
-- notes_search and tests its week in the rows: slower, for that hour). A later migration
-- drops search_week, search_window_key, search_time_keys and search_windows.
DROP INDEX notes_search;

-- Immutable arithmetic (an interval since the epoch; extract(epoch FROM t) is only stable),
-- so these SQL functions inline into the index expression and its rechecks. None is STRICT:
-- PostgreSQL inlines a STRICT SQL function only if its body is strict, and greatest() and
-- an ARRAY[] are not (declared STRICT, search_hour_keys took 210 µs a row instead of 2.1).
-- A NULL still gives NULL keys, and tenant_id and created_at are never NULL.
CREATE FUNCTION search_hour(t timestamptz) RETURNS int
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT greatest(0, floor(date_part('epoch', t - timestamptz '1970-01-01 00:00:00+00') / 3600))::int
$$;

-- The key of the window of 4^level hours that holds `hour`: the one place the layout above
-- is written, for the index (search_hour_keys) and the search (search_hour_windows).
CREATE FUNCTION search_hour_key(tenant bigint, hour int, level int) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT tenant * 268435456 + level * 16777216 + (hour >> (2 * level))
$$;

-- A note's nine keys.
CREATE FUNCTION search_hour_keys(tenant bigint, t timestamptz) RETURNS bigint[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT ARRAY[public.search_hour_key(tenant, public.search_hour(t), 0), public.search_hour_key(tenant, public.search_hour(t), 1),
                 public.search_hour_key(tenant, public.search_hour(t), 2), public.search_hour_key(tenant, public.search_hour(t), 3),
                 public.search_hour_key(tenant, public.search_hour(t), 4), public.search_hour_key(tenant, public.search_hour(t), 5),
                 public.search_hour_key(tenant, public.search_hour(t), 6), public.search_hour_key(tenant, public.search_hour(t), 7),
                 public.search_hour_key(tenant, public.search_hour(t), 8)]
$$;

-- The windows that cover [oldest, newest], newest first. The first is the one expected to
-- hold `wanted` matches at the rate seen: `seen` matches among the notes from `edge` to
-- `newest` (at least one is assumed, so a word the walk did not see starts wide). Each next
-- window ends the hour before the last one began and is as wide, or 4 times as wide where
-- that size's windows begin: at most 3 of a size before the next. Never wider by more than
-- 4 at a step, so a word that came in a burst is not fetched 16 windows' worth at once.
CREATE FUNCTION search_hour_windows(
    tenant bigint, newest timestamptz, edge timestamptz, oldest timestamptz, seen bigint, wanted bigint
) RETURNS SETOF bigint
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE STRICT ROWS 6 AS $$
DECLARE
    hour int := public.search_hour(newest);
    last int := public.search_hour(oldest);
    hours float8 := greatest(date_part('epoch', newest - edge) / 3600 * wanted / greatest(seen, 1), 1);
    level int := least(8, ceil(ln(hours) / ln(4)))::int;
BEGIN
    RETURN NEXT public.search_hour_key(tenant, hour, level);
    hour := ((hour >> (2 * level)) << (2 * level)) - 1;
    WHILE hour >= last LOOP
        IF level < 8 AND (hour + 1) % (1 << (2 * (level + 1))) = 0 THEN
            level := level + 1;
        END IF;
        RETURN NEXT public.search_hour_key(tenant, hour, level);
        hour := hour - (1 << (2 * level));
    END LOOP;
END
$$;

CREATE INDEX notes_search ON notes USING gin (
    search_hour_keys(tenant_id, created_at), body_folded gin_trgm_ops, search_bigrams(body_folded));
