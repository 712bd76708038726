-- Search that ignores case, accents and character width (issue 37): `cafe` finds `Café`,
-- `ZURICH` finds `Zürich`, `ＴＯＫＹＯ` finds `Tokyo`, `strasse` finds `Straße`.
--
-- search_fold(text) is the one form both sides are compared in: NFKC (full-width letters
-- and digits, ligatures, compatibility forms to their plain ones), then unaccent's rules
-- (diacritics off Latin, Greek and Cyrillic letters; ß to ss; ı to i), then lower case by
-- ICU's root locale, so the result is the same whatever the database's own locale. Kana's
-- voicing marks, Hangul and Han are left as they are. ASCII text, most of it, takes the
-- short way (lower case only): 2 µs a call against 4 µs.
--
-- unaccent() is STABLE only because its rules are a file that could change; they change
-- with the server package, and an upgrade that changed them would call for a REINDEX and
-- an UPDATE of the folded columns (docs/operations.md, Upgrading). Declared IMMUTABLE so
-- that stored columns and indexes may use it, as unaccent's own documentation suggests.
-- Made here by the owner where a superuser has not made it already (it is a trusted
-- extension); looked up first, because Citus refuses even CREATE EXTENSION IF NOT EXISTS
-- from a role that does not own the existing one.
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'unaccent') THEN
        CREATE EXTENSION unaccent;
    END IF;
END
$$;

CREATE FUNCTION search_fold(t text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$
    SELECT CASE
        WHEN octet_length(t) = length(t) THEN lower(t COLLATE "C") COLLATE "default"
        ELSE lower(public.unaccent('public.unaccent'::regdictionary,
                                   CASE WHEN t IS NFKC NORMALIZED THEN t ELSE normalize(t, NFKC) END)
                   COLLATE "und-x-icu") COLLATE "default"
    END
$$;

-- `%q%` for LIKE over folded text: q folded the same way, then `\`, `%` and `_` escaped
-- (after folding: a full-width ％ folds to %), so that they match themselves.
CREATE FUNCTION search_pattern(q text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$
    SELECT '%' || regexp_replace(search_fold(q), '([\\%_])', '\\\1', 'g') || '%'
$$;

-- The folded text is stored beside the text (computed once, as a row is written), so a
-- search compares stored values and never folds a row as it reads: the trigram indexes
-- are on the folded columns, and a row the index returns is checked again against them.
ALTER TABLE notes ADD COLUMN body_folded text GENERATED ALWAYS AS (search_fold(body)) STORED;
ALTER TABLE users ADD COLUMN username_folded text GENERATED ALWAYS AS (search_fold(username)) STORED;
ALTER TABLE places ADD COLUMN name_folded text GENERATED ALWAYS AS (search_fold(name)) STORED;

-- The indexes on the unfolded columns stay for the release before this one (its replicas
-- search with ILIKE while an upgrade rolls through, docs/operations.md "Upgrading"); a later
-- migration drops them.
CREATE INDEX notes_body_folded_trgm ON notes USING gin (tenant_id, body_folded gin_trgm_ops);
CREATE INDEX users_username_folded_trgm ON users USING gin (tenant_id, username_folded gin_trgm_ops);
CREATE INDEX places_name_folded_trgm ON places USING gin (tenant_id, name_folded gin_trgm_ops);

-- The views name their columns when made: again, with the new ones.
CREATE OR REPLACE VIEW tenant_notes AS
SELECT * FROM notes WHERE tenant_id = current_tenant_id() AND NOT author_disabled;
CREATE OR REPLACE VIEW tenant_places AS
SELECT * FROM places WHERE tenant_id = current_tenant_id();
CREATE OR REPLACE VIEW tenant_users AS
SELECT tenant_id, id, username, disabled_at, created_at, username_folded FROM users WHERE tenant_id = current_tenant_id();
