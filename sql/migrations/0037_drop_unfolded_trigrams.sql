-- The trigram indexes on the unfolded columns (migration 0003) served the release before
-- 0033, whose replicas searched bodies, usernames and place names with ILIKE while that
-- upgrade rolled through. Every statement since searches the folded columns
-- (notes_search, users_username_folded_trgm, places_name_folded_trgm), so these only cost
-- every insert and update a GIN index's work, and 112 MB for a million notes
-- (bench/results/2026-11-28-search.md).
DROP INDEX notes_body_trgm;
DROP INDEX users_username_trgm;
DROP INDEX places_name_trgm;
