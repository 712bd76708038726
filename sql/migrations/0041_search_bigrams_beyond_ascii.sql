-- Bigrams only where trigrams cannot find a pair (issue 37's insert cost).
--
-- 0034 indexed every bigram of every note: about 45 more GIN entries a note, as many as its
-- trigrams, and after 0040 half of what an insert still pays for search (0.14 of 0.27 ms of
-- CPU over 0032's path, bench/results/2026-11-28-insert-functions.md). For Latin text nearly
-- all of them lie inside trigrams the index has already: pg_trgm makes words of letters and
-- digits and pads each with two blanks in front, so in a run of [a-z0-9] (what an ASCII word
-- is after search_fold) every pair `xy` is the end of a trigram `cxy` (c in [a-z0-9]) or, at
-- the run's start, of `" xy"`.
--
-- So a note's bigrams are now indexed only for its runs that hold some other character (CJK,
-- Hangul, Cyrillic, an accent the fold keeps, an emoji): search_bigrams_beyond_ascii. Runs are
-- split on the same ASCII separators as search_bigrams; such a separator is a word boundary
-- for pg_trgm too, so a run of [a-z0-9] is exactly one pg_trgm word. A search for a pair:
--
--   - beyond ASCII (東京, `é1`): the runs that hold it hold that character, so their bigrams
--     are indexed: `search_bigrams_beyond_ascii(body_folded) @> search_query_bigrams(q)`;
--   - ASCII (`qj`): in a run beyond ASCII through those bigrams, or in an ASCII run through
--     the trigrams ending in it: search_ascii_pair_pattern is a regular expression, `qj` after
--     the start, a separator or [a-z0-9], from which pg_trgm extracts exactly the 37 trigrams
--     ` qj`, `aqj` … `9qj` (one GIN scan that ORs them).
--
-- The service asks the two ways in two scans (NoteStore.windowedMatches), never as one OR:
-- planned once, the query is only InitPlan parameters to the planner, and it once priced a
-- time window read whole below the BitmapOr of the two (bench/results/2026-11-28-search-10m.md).
-- The substring itself is tested in the rows (strpos), as before.
--
-- As in 0038, the index is built beside the old one (writes wait, reads go on) and 0042 swaps
-- them. search_bigrams stays: it is the pairs of a query, and a replica of the previous
-- release asks `search_bigrams(body_folded) @>` while the upgrade rolls through (after 0042,
-- no index serves that expression: its two-character searches read the tenant's rows, correct
-- and slow, until it is replaced).
--
-- PL/pgSQL, as 0040 explains: SQL bodies with subqueries are planned again in every statement.

-- search_bigrams' pairs of the runs that hold a character other than [a-z0-9]. A function of
-- its own, not search_bigrams changed: an index expression's function must not change meaning
-- under a built index.
CREATE FUNCTION search_bigrams_beyond_ascii(folded text) RETURNS text[]
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE STRICT AS $$
BEGIN
    -- Most Latin notes hold only [a-z0-9] and separators: one scan says no run is beyond.
    IF folded !~ '[^a-z0-9 \t\n\r\f\v!-/:-@\[-`{-~]' THEN
        RETURN '{}';
    END IF;
    RETURN array(SELECT substr(run, i, 2)
                 FROM regexp_split_to_table(folded, '[ \t\n\r\f\v!-/:-@\[-`{-~]+') run,
                      generate_series(1, length(run) - 1) i
                 WHERE run ~ '[^a-z0-9]');
END
$$;

-- The pairs of a folded query a note's search_bigrams_beyond_ascii must all hold: those beyond
-- ASCII when it has any (each lies in a run beyond ASCII), else its first pair alone (which
-- may lie in an ASCII run instead, found through the trigrams: search_ascii_pair_pattern).
-- Empty for a query without a pair; the service asks this only of a query with one.
CREATE FUNCTION search_query_bigrams(folded text) RETURNS text[]
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE STRICT AS $$
DECLARE
    pairs text[] := public.search_bigrams(folded);
    beyond text[] := array(SELECT pair FROM unnest(pairs) pair WHERE pair ~ '[^a-z0-9]');
BEGIN
    RETURN CASE WHEN cardinality(beyond) > 0 THEN beyond ELSE pairs[1:1] END;
END
$$;

-- For a query whose pairs are all ASCII, a regular expression for its first pair where an
-- ASCII run would hold it: after the start of the text, an ASCII separator, or [a-z0-9].
-- NULL otherwise: `body_folded ~ NULL` is no index condition in a statement planned for its
-- values, and an index scan that returns nothing in one planned once.
CREATE FUNCTION search_ascii_pair_pattern(folded text) RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE STRICT AS $$
DECLARE
    pair text := (public.search_query_bigrams(folded))[1];
BEGIN
    RETURN CASE WHEN pair ~ '^[a-z0-9]{2}$' THEN '(^|[ \t\n\r\f\v!-/:-@\[-`{-~a-z0-9])' || pair END;
END
$$;

CREATE INDEX notes_search_beyond_ascii ON notes USING gin (
    search_hour_keys(tenant_id, created_at), search_cell_keys(tenant_id, location),
    body_folded gin_trgm_ops, search_bigrams_beyond_ascii(body_folded));
