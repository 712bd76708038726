-- Places in the text index (issue 37): a rare word in a viewport or near a point.
--
-- A word in a box had two indexes to choose from, the box's (GiST on the location) and the
-- word's (notes_search), and neither knows the other's half: `axolotl` in a 10 km box in
-- London was a BitmapAnd of 97,000 notes in the box with the word's matches in the whole
-- tenant (17-25 ms at 1M notes, 42 at 10M), and near a point every match in range was
-- fetched and measured (58 ms at 10M). Now each note also has four cell keys in
-- notes_search, so the index finds the notes that hold the word *in* the cells that cover
-- the box, in one scan (3.5 ms in the probe of bench/results/2026-11-28-search.md).
--
-- Cells: the world in 2^zoom by 2^zoom cells of equal degrees, at zoom 3, 6, 9 and 12 (a cell
-- at zoom 12 is 0.088° of longitude by 0.044° of latitude, about 6 by 5 km in London). Key:
-- tenant_id * 2^28 + zoom * 2^24 + (row << zoom) + column, row and column counted from
-- -90° and -180°; 180° and 90° fall in the last column and row. Degrees, not Web Mercator
-- tiles: viewports are boxes of degrees (`bbox`), so a cell's edges are where the box's are,
-- and no logarithm runs for every note. The tenant is inside the key, as for the hour keys
-- (0036), whose column these keys sit beside; tenant ids must stay below 2^35.
--
-- notes_search is rebuilt with the cell keys as its second column. 0036's functions keep
-- their names and meaning, so a replica of the previous release keeps getting exactly its
-- pages while the rollout runs (its statement asks hour keys and trigrams, which the new
-- index still answers). The new index is built beside the old one, and 0039 drops the old
-- one and gives the new one its name: CREATE INDEX holds off writes to notes while it runs
-- (107 s at 1.1M notes), but reads go on through the old index. (0035 and 0036 dropped
-- first, which held off reads for the whole build.) The DROP is a migration of its own: in
-- this transaction it would upgrade the build's SHARE lock to ACCESS EXCLUSIVE, and a note
-- edit holding its row lock (FOR UPDATE) while waiting to write would deadlock with it,
-- rolling back the whole build.

-- Immutable arithmetic, and not STRICT, so they inline into the index expression (see 0036).
CREATE FUNCTION search_cell_column(zoom int, lng float8) RETURNS int
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT least(greatest(floor((lng + 180) / 360 * (1 << zoom)), 0), (1 << zoom) - 1)::int
$$;

CREATE FUNCTION search_cell_row(zoom int, lat float8) RETURNS int
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT least(greatest(floor((lat + 90) / 180 * (1 << zoom)), 0), (1 << zoom) - 1)::int
$$;

-- The one place the key layout above is written, for the index and the search.
CREATE FUNCTION search_cell_key(tenant bigint, zoom int, "column" int, "row" int) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT tenant * 268435456 + zoom * 16777216 + ("row"::bigint << zoom) + "column"
$$;

-- A note's four keys (a location is never NULL).
CREATE FUNCTION search_cell_keys(tenant bigint, location geography) RETURNS bigint[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT ARRAY[
        public.search_cell_key(tenant, 3, public.search_cell_column(3, public.st_x(location::public.geometry)),
                               public.search_cell_row(3, public.st_y(location::public.geometry))),
        public.search_cell_key(tenant, 6, public.search_cell_column(6, public.st_x(location::public.geometry)),
                               public.search_cell_row(6, public.st_y(location::public.geometry))),
        public.search_cell_key(tenant, 9, public.search_cell_column(9, public.st_x(location::public.geometry)),
                               public.search_cell_row(9, public.st_y(location::public.geometry))),
        public.search_cell_key(tenant, 12, public.search_cell_column(12, public.st_x(location::public.geometry)),
                               public.search_cell_row(12, public.st_y(location::public.geometry)))]
$$;

-- The keys of the cells that cover a box, `west` <= `east` (the service splits a box across
-- the antimeridian into two calls): at the finest zoom that needs no more than 64 cells, so
-- the index reads few posting lists and returns few notes outside the box. Zoom 3 is at most
-- 8 by 8 cells; an empty array for west > east.
CREATE FUNCTION search_cells(tenant bigint, west float8, south float8, east float8, north float8) RETURNS bigint[]
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE STRICT AS $$
DECLARE
    zoom int;
BEGIN
    IF west > east OR south > north THEN
        RETURN '{}';
    END IF;
    FOREACH zoom IN ARRAY ARRAY[12, 9, 6, 3] LOOP
        EXIT WHEN zoom = 3
            OR (public.search_cell_column(zoom, east) - public.search_cell_column(zoom, west) + 1)
               * (public.search_cell_row(zoom, north) - public.search_cell_row(zoom, south) + 1) <= 64;
    END LOOP;
    RETURN ARRAY(
        SELECT public.search_cell_key(tenant, zoom, x, y)
        FROM generate_series(public.search_cell_column(zoom, west), public.search_cell_column(zoom, east)) x,
             generate_series(public.search_cell_row(zoom, south), public.search_cell_row(zoom, north)) y);
END
$$;

CREATE INDEX notes_search_by_cell ON notes USING gin (
    search_hour_keys(tenant_id, created_at), search_cell_keys(tenant_id, location),
    body_folded gin_trgm_ops, search_bigrams(body_folded));
