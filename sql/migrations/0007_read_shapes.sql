-- Every read shape fast on a million notes (issue 9; measured in
-- bench/results/2026-11-22-shapes.md).
--
-- GET /v1/places newest first sorted every place of the tenant for each page
-- (7.7 ms on 2,000 places, most of it the per-place note count of rows that a
-- top-N sort then threw away); this index hands out the page in order, and a
-- cursor starts its scan from the keyset, as notes_newest does for notes.
-- Cost to writers: one more btree entry per place written (places change rarely).
CREATE INDEX places_newest ON places (tenant_id, created_at DESC, id DESC);

-- No JIT compilation for this database's sessions. The service's statements run
-- in milliseconds, but a statement whose *estimated* cost passes jit_above_cost
-- (the walk-or-index statements of NoteList, whose unused branch is costed as a
-- sort of every match) was compiled with LLVM before it ran: ~0.8-1.2 s on this
-- machine for a query that then took 20 ms (perf: libLLVM frames). New sessions
-- pick the setting up; nothing here needs a restart.
DO $$
BEGIN
    EXECUTE format('ALTER DATABASE %I SET jit = off', current_database());
END $$;

-- No parallel scans of notes. A parallel worker is a new process that loads
-- PostGIS before it does anything (300-500 ms measured with the machine busy),
-- and the planner chose a Gather for branches that a one-time filter then left
-- unused, so the workers started for nothing. Every list and search reads a few
-- hundred rows through an index; parallelism only ever shows up in plans that
-- are wrong for this service anyway. (Admin counts scan serially.)
ALTER TABLE notes SET (parallel_workers = 0);
