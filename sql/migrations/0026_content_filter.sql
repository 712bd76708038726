-- A tenant's word list (issue 34): note bodies, place names and usernames holding one of
-- the words are refused (422 content_refused) or held for a moderator, as the tenant
-- chooses. The service compares skeletons (Shared/ContentFilter.swift): case, diacritics,
-- compatibility forms, invisible characters, look-alikes and digit swaps folded.
ALTER TABLE tenants ADD COLUMN filter_words text[] NOT NULL DEFAULT '{}'
    CONSTRAINT tenants_filter_words CHECK (cardinality(filter_words) <= 10000 AND array_position(filter_words, NULL) IS NULL);
ALTER TABLE tenants ADD COLUMN filter_action text NOT NULL DEFAULT 'refuse'
    CONSTRAINT tenants_filter_action CHECK (filter_action IN ('refuse', 'hold'));
