import Postgres

extension NoteStore {
    /// How many of the newest notes a walking page looks through first (see `newestStatement`).
    static let newestWalk = 1000
    /// How many matches among those make the walk go on (1 in 200): fewer, and the
    /// matches are rare enough that finding them all through an index is cheaper.
    static let newestWalkGoesOn = newestWalk / 200
    /// How many more notes the walk looks through when it goes on, before it asks the index after all.
    static let newestWalkFurther = 15 * newestWalk

    /// Newest first. The keyset `(created_at, id) < (…)` is a row comparison the
    /// `(tenant_id, created_at DESC, id DESC)` index starts its scan from, so a deep
    /// page costs the same as the first. Notes written after the walk began sort
    /// before the cursor and never shift the pages still to come.
    ///
    /// The page is cut before the join to users, so the username is looked up for the
    /// returned rows only (not for every row a sort looked at); every note has its
    /// author (a foreign key), so the join never drops a row.
    ///
    /// With a viewport or a text search the planner cannot tell how many notes match: PostGIS
    /// estimates a box from a coarse grid (notes crowd into cities), and a LIKE pattern is
    /// estimated from a 100-entry sample of bodies, so a rare word that happens to be in it
    /// looks like 1 note in 100. Each wrong guess is costly: sorting every note of a dense
    /// city (1 s on the benchmark's London), or walking a year of notes for a rare word
    /// (0.4 s). So the statement decides from what it sees, not from estimates (bench/results/
    /// 2026-11-23-search.md), and the plan is the same for every value, so it is prepared:
    ///
    /// 1. `walked`: the matches among the newest `newestWalk` notes (the `notes_newest`
    ///    index, filtered, stopping at `limit + 1`). Enough of them, or no notes beyond,
    ///    and that is the page: a common word or a dense box.
    /// 2. A text search of one word (no viewport, no author matched by name) then asks the
    ///    text index one time window at a time, the first sized by what the walk saw
    ///    (`windowedMatches`): this branch alone is the page.
    /// 3. Otherwise, `further`: with at least `newestWalkGoesOn` matches in the walk (1 in
    ///    200), the walk goes on from where it stopped (`edge`) through at most
    ///    `newestWalkFurther` more notes. Walked rows are all newer than `edge`, further ones
    ///    older, so the walked rows and the first further ones (as many as make `limit + 1`)
    ///    are the page, when there are that many or the notes ran out. A phrase goes this
    ///    way: the index's candidates for a phrase of common words are many times its matches
    ///    (`great view`, 1 note in 90: 21 ms by windows, 11 by walking further, at 1M).
    /// 4. `matches`: otherwise the matches are rare: through the text index window by window
    ///    (a text search), or every one of them through the spatial index or the author's,
    ///    sorted. This branch alone is the page.
    ///
    /// Each branch is gated by one-time filters on the counts before it, so a branch that is
    /// not needed never runs. Either way the rows are exactly the first `limit + 1` matches.
    ///
    /// On Citus a text search with no other filter runs on the tenant's worker, as a function
    /// whose body is this statement (`WorkerReads`).
    static func newestStatement(_ list: NoteList, tenantID: Int64, viewerID: Int64) -> PostgresQuery {
        let (filters, limit) = (list.filters, list.limit)
        let keyset: PostgresQuery = list.page.timeKeyset("n.created_at", "n.id").map { "\n  AND \($0)" } ?? ""
        guard filters.walksNewestFirst else {
            return """
                SELECT \(Self.noteColumns), (extract(epoch FROM n.created_at) * 1000000)::bigint
                FROM (
                    SELECT n.* FROM tenant_notes n
                    WHERE \(Self.condition(filters, tenantID: tenantID, viewerID: viewerID, reading: .throughIndex))\(keyset)
                    ORDER BY n.created_at DESC, n.id DESC
                    LIMIT \(limit + 1)
                ) n
                JOIN tenant_users u ON u.tenant_id = \(tenantID) AND u.id = n.user_id
                ORDER BY n.created_at DESC, n.id DESC
                """
        }
        let condition = Self.condition(filters, tenantID: tenantID, viewerID: viewerID, reading: .walk)
        let rows = limit + 1
        // The walk's sizes are constants of this code, written into the SQL: a generic plan
        // must see them (a LIMIT that is a parameter is guessed at a tenth of the table).
        let walk: PostgresQuery = "\(literal: Self.newestWalk)"
        let walkEdge: PostgresQuery = "\(literal: Self.newestWalk - 1)"
        let walkedAndEdge: PostgresQuery = """
            walked AS MATERIALIZED (
                SELECT n.* FROM (
                    SELECT n.* FROM tenant_notes n
                    WHERE n.tenant_id = \(tenantID)\(keyset)
                    ORDER BY n.created_at DESC, n.id DESC
                    LIMIT \(walk)
                ) n
                WHERE \(condition)
                ORDER BY n.created_at DESC, n.id DESC
                LIMIT \(rows)
            ),
            edge AS MATERIALIZED (
                SELECT n.created_at, n.id FROM tenant_notes n
                WHERE n.tenant_id = \(tenantID)\(keyset)
                ORDER BY n.created_at DESC, n.id DESC
                OFFSET \(walkEdge) LIMIT 1
            )
            """
        let pageWithAuthors: PostgresQuery = """
            SELECT \(Self.noteColumns), (extract(epoch FROM n.created_at) * 1000000)::bigint
            FROM page n
            JOIN tenant_users u ON u.tenant_id = \(tenantID) AND u.id = n.user_id
            ORDER BY n.created_at DESC, n.id DESC
            """
        let windowed = Self.searchesByTimeWindows(filters)
        let pairLookups = windowed ? filters.search?.text.pairLookups("n.body_folded", foldedOnce: filters.isPlannedOnce) ?? [] : []
        if windowed, !(filters.search?.text.isPhrase ?? false) {
            return """
                WITH \(walkedAndEdge),
                fallback AS MATERIALIZED (
                    SELECT (SELECT count(*) FROM walked) < \(rows) AND EXISTS (SELECT FROM edge) AS needed
                ),
                matches AS MATERIALIZED (
                \(Self.windowedMatches(limit: limit, condition: condition, pairLookups: pairLookups, keyset: keyset, tenantID: tenantID))
                ),
                page AS (
                    SELECT * FROM walked WHERE NOT (SELECT needed FROM fallback)
                    UNION ALL
                    (SELECT * FROM matches ORDER BY created_at DESC, id DESC LIMIT \(rows))
                )
                \(pageWithAuthors)
                """
        }
        let inArea = Self.condition(filters, tenantID: tenantID, viewerID: viewerID, reading: .throughIndex)
        let further: PostgresQuery = "\(literal: Self.newestWalkFurther)"
        let goesOn: PostgresQuery = "\(literal: Self.newestWalkGoesOn)"
        let pastEdge: PostgresQuery = "(n.created_at, n.id) < ((SELECT created_at FROM edge), (SELECT id FROM edge))"
        return """
            WITH \(walkedAndEdge),
            branch AS MATERIALIZED (
                SELECT CASE WHEN (SELECT count(*) FROM walked) = \(rows) OR NOT EXISTS (SELECT FROM edge) THEN 'walked'
                            WHEN (SELECT count(*) FROM walked) >= \(goesOn) THEN 'further'
                            ELSE 'matches' END AS name
            ),
            further AS MATERIALIZED (
                SELECT n.* FROM (
                    SELECT n.* FROM tenant_notes n
                    WHERE n.tenant_id = \(tenantID) AND \(pastEdge)
                      AND (SELECT name FROM branch) = 'further'
                    ORDER BY n.created_at DESC, n.id DESC
                    LIMIT \(further)
                ) n
                WHERE \(condition)
                ORDER BY n.created_at DESC, n.id DESC
                LIMIT (SELECT \(rows) - count(*) FROM walked)
            ),
            fallback AS MATERIALIZED (
                SELECT (SELECT name FROM branch) = 'matches'
                       OR ((SELECT name FROM branch) = 'further'
                           AND (SELECT count(*) FROM walked) + (SELECT count(*) FROM further) < \(rows)
                           AND (SELECT count(*) FROM (SELECT FROM tenant_notes n
                                                      WHERE n.tenant_id = \(tenantID) AND \(pastEdge)
                                                      LIMIT \(further)) w) = \(further)) AS needed
            ),
            matches AS MATERIALIZED (
            \(windowed
                ? Self.windowedMatches(limit: limit, condition: condition, pairLookups: pairLookups, keyset: keyset, tenantID: tenantID)
                : Self.everyMatch(condition: inArea, keyset: keyset))
            ),
            page AS (
                SELECT * FROM walked WHERE NOT (SELECT needed FROM fallback)
                UNION ALL
                SELECT * FROM further WHERE NOT (SELECT needed FROM fallback)
                UNION ALL
                (SELECT * FROM matches ORDER BY created_at DESC, id DESC LIMIT \(rows))
            )
            \(pageWithAuthors)
            """
    }

    /// The page when the walk did not fill it and no time windows serve the search (a viewport,
    /// an author matched by name, a filter without text): every match, through whichever index
    /// the planner picks for the condition, sorted by the `matches` CTE's caller.
    static func everyMatch(condition: PostgresQuery, keyset: PostgresQuery) -> PostgresQuery {
        """
        SELECT n.* FROM tenant_notes n
        WHERE \(condition)\(keyset)
          AND (SELECT needed FROM fallback)
        """
    }

    /// Whether the page is found in time windows of the text index: a text search with no
    /// viewport and no author matched by name (those have indexes of their own, which know no time).
    static func searchesByTimeWindows(_ filters: NoteFilters) -> Bool {
        filters.searchesTextIndexAlone && filters.bbox == nil
    }

    /// The page when the walk did not fill it, from the text index one time window at a
    /// time, newest first (`search_spans`, migrations 0036 and 0043): each window's matches come
    /// sorted and windows do not overlap, so the first `limit + 1` rows of their
    /// concatenation are the page, and the windows past it are never read. The first window
    /// is the one expected to hold a page at the rate of matches the walk saw among the
    /// newest notes (from the newest before the cursor to `edge`), a power of 8 hours; the next
    /// ones widen by 8 at most. So a word of 1 note in 100 starts with an hour or a few, a rare one with
    /// months, and the cost follows the page, not the number of matches (`axolotl` at ten
    /// million notes: 5,000 rows fetched and sorted before 0035). The windows reach back to
    /// the tenant's oldest note; both ends are read from `notes_newest`. The newest note before
    /// the cursor is read again here rather than kept by the walk: `walked` holds matches
    /// only, and one more probe of `notes_newest` (about 20 µs) runs only when the windows do.
    static func windowedMatches(limit: Int, condition: PostgresQuery, pairLookups: [PostgresQuery], keyset: PostgresQuery,
                                tenantID: Int64) -> PostgresQuery {
        func scan(asking lookup: PostgresQuery?) -> PostgresQuery {
            let asked: PostgresQuery = lookup.map { "\n  AND \($0)" } ?? ""
            return """
            SELECT n.* FROM tenant_notes n
            WHERE \(condition)\(asked)\(keyset)
              AND search_span_keys(n.tenant_id, n.created_at) @> ARRAY[w.key]
            ORDER BY n.created_at DESC, n.id DESC
            LIMIT \(limit + 1)
            """
        }
        var inWindow = scan(asking: nil)
        if !pairLookups.isEmpty {
            // A pair: one scan for each way the index finds it (SearchText.pairLookups), so
            // each is asked with the window whatever the planner guesses; a note found both
            // ways is on the page once.
            let scans = pairLookups.map { lookup -> PostgresQuery in "(\(scan(asking: lookup)))" }
                .joined(separator: "\nUNION ALL\n")
            inWindow = """
                SELECT DISTINCT ON (created_at, id) * FROM (
                \(scans)
                ) a
                ORDER BY created_at DESC, id DESC
                LIMIT \(limit + 1)
                """
        }
        return """
            SELECT m.* FROM search_spans(
                \(tenantID),
                (SELECT n.created_at FROM tenant_notes n WHERE n.tenant_id = \(tenantID)\(keyset)
                 ORDER BY n.created_at DESC, n.id DESC LIMIT 1),
                (SELECT created_at FROM edge),
                (SELECT n.created_at FROM tenant_notes n WHERE n.tenant_id = \(tenantID)
                 ORDER BY n.created_at, n.id LIMIT 1),
                (SELECT count(*) FROM walked),
                \(limit + 1)) w(key)
            CROSS JOIN LATERAL (
            \(inWindow)
            ) m
            WHERE (SELECT needed FROM fallback)
            LIMIT \(limit + 1)
            """
    }
}
