-- The second half of 0041, in a transaction of its own for the reason 0039 gives: the index
-- with bigrams beyond ASCII only takes the place of 0038's. Plans name the index notes_search.
DROP INDEX notes_search;
ALTER INDEX notes_search_beyond_ascii RENAME TO notes_search;
