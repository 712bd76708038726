-- The second half of 0043, in a transaction of its own for the reason 0039 gives: the index
-- with windows of 8^level hours takes the place of 0041's. Plans name the index notes_search.
DROP INDEX notes_search;
ALTER INDEX notes_search_spans RENAME TO notes_search;
