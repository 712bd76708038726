-- The second half of 0038: the index with cell keys takes the place of 0036's. A transaction
-- of its own, so the ACCESS EXCLUSIVE lock the DROP needs is not an upgrade of 0038's build
-- lock (see 0038): it waits for the statements that run, holds off the next ones for a
-- moment, and does not deadlock with a note edit. Plans name the index notes_search.
DROP INDEX notes_search;
ALTER INDEX notes_search_by_cell RENAME TO notes_search;
