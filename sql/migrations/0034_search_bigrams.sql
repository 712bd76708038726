-- Two-character queries over a whole tenant (issue 37): 東京, 서울, 夜景, 맛집 are ordinary
-- words, and pg_trgm makes no trigram of a two-character pattern (LIKE '%東京%' read every
-- note of the tenant). Beside the trigram index, an index of each note's bigrams: every
-- two characters in a row of its folded text, within runs that ASCII white space and ASCII
-- punctuation separate (NFKC has made full-width ones ASCII). A query's bigrams must all be
-- among a note's for its folded text to hold the query's, so `@>` narrows the notes and the
-- LIKE over body_folded decides.
--
-- The separators are a fixed ASCII set, not a locale's character classes, so the function
-- gives the same array on every server. No DISTINCT: GIN drops repeated keys itself. 40 µs
-- for a 44-character body (pg_trgm's show_trgm, in C: 12 µs); bench/results for what it
-- costs an insert.
CREATE FUNCTION search_bigrams(folded text) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$
    SELECT array(SELECT substr(run, i, 2)
                 FROM regexp_split_to_table(folded, '[ \t\n\r\f\v!-/:-@\[-`{-~]+') run,
                      generate_series(1, length(run) - 1) i)
$$;

-- An expression index, not a stored column: the array is needed only to find notes, and a
-- found note is checked against its stored body_folded.
CREATE INDEX notes_body_folded_bigrams ON notes USING gin (tenant_id, search_bigrams(body_folded));
