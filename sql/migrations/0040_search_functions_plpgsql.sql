-- search_fold (0033) and search_bigrams (0034) in PL/pgSQL, with the same bodies: the same
-- results, so body_folded, username_folded, name_folded and notes_search stay valid and
-- nothing is rebuilt (issue 37's insert cost).
--
-- Neither could be inlined as SQL: search_fold is STRICT with a CASE (not strict) in its
-- body and calls unaccent (STABLE), search_bigrams' body is a subquery. So PostgreSQL 15 ran
-- them through the SQL-function executor, which parses and plans the body again in every
-- statement that calls them: each note inserted or edited (the generated column and the
-- index expression), each signup and each search. PL/pgSQL keeps its plans for the
-- connection. Measured on the 1M load with pgbench, one statement per call, minus the
-- statement alone (bench/results/2026-11-28-insert-functions.md; it saves an insert about
-- 0.2 ms of CPU, a sixth of it):
--
--   function (44-character body)   SQL      PL/pgSQL
--   search_fold                    65 µs    9 µs
--   search_bigrams                 135 µs   52 µs
CREATE OR REPLACE FUNCTION search_fold(t text) RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE STRICT AS $$
BEGIN
    RETURN CASE
        WHEN octet_length(t) = length(t) THEN lower(t COLLATE "C") COLLATE "default"
        ELSE lower(public.unaccent('public.unaccent'::regdictionary,
                                   CASE WHEN t IS NFKC NORMALIZED THEN t ELSE normalize(t, NFKC) END)
                   COLLATE "und-x-icu") COLLATE "default"
    END;
END
$$;

CREATE OR REPLACE FUNCTION search_bigrams(folded text) RETURNS text[]
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE STRICT AS $$
BEGIN
    RETURN array(SELECT substr(run, i, 2)
                 FROM regexp_split_to_table(folded, '[ \t\n\r\f\v!-/:-@\[-`{-~]+') run,
                      generate_series(1, length(run) - 1) i);
END
$$;
