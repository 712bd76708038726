import Postgres

/// How a statement reads the notes a `NoteStore.condition` tests.
enum NoteReading {
    /// Walking an order (newest or nearest first) and testing each row: nothing in the
    /// condition is asked of an index (a pair's text is only its substring), and a statement
    /// planned once tests authors matched by name as a hashed subquery, built once per run;
    /// many authors (`NoteFilters.Authors.many`) by each row's author's name.
    case walk
    /// Through indexes (clusters, a page by author or place, every match of the walking
    /// statements' last branch): authors matched by name as `= ANY`, which the author index
    /// answers, and a text search's area as the cells of `notes_search`. A walk leaves the
    /// cells out: four cell keys for each of a thousand rows would cost more than they save.
    case throughIndex
    /// As `throughIndex`, but the radius is tested in the rows (`_ST_DWithin`, ST_DWithin's
    /// test without its index support): nearest first's every match in range, found through
    /// the filter's own index, where the planner would trade that index for a walk of the
    /// spatial one (PostGIS underestimates how many notes a city holds).
    case throughFilterIndex
}

extension NoteStore {
    /// The WHERE condition over `n` (a row of `tenant_notes`) for what `viewer` may see
    /// (`Audience`) and these filters ask for. Every value is a bound parameter.
    ///
    /// The tenant is named although the view already limits rows to it, so the
    /// `(tenant_id, …)` indexes get an equality on their first column.
    ///
    /// `reading` says how the statement reads the notes it tests (`NoteReading`).
    static func condition(_ filters: NoteFilters, tenantID: Int64, viewerID: Int64, reading: NoteReading) -> PostgresQuery {
        var sql: PostgresQuery = """
            n.tenant_id = \(tenantID)
              AND \(Audience.seesNote("n", tenantID: tenantID, viewerID: viewerID))
            """
        if let near = filters.near, let radius = filters.radius {
            // ST_DWithin on geography measures on the spheroid; its index support expands
            // the point into a box the GiST index on (tenant_id, location) answers.
            let within: PostgresQuery = reading == .throughFilterIndex ? "_ST_DWithin" : "ST_DWithin"
            sql.append("\n  AND \(within)(n.location, \(near.geography), \(radius), true)")
        }
        if let bbox = filters.bbox {
            // A word in a box tests the box in degrees only: offered the spatial index beside
            // the word's, the planner ANDs every note of a city's box with the word's matches
            // (17-25 ms for `axolotl` in London at 1M notes), where the text index's cells
            // find the word in the box alone (`inTextSearchArea`: 3.5 ms).
            let inBox = filters.textSearchArea == nil
                ? bbox.condition(location: "n.location::geometry")
                : bbox.condition(latitude: "ST_Y(n.location::geometry)", longitude: "ST_X(n.location::geometry)")
            sql.append("\n  AND \(inBox)")
        }
        if let search = filters.search {
            sql.append("\n  AND \(searchCondition(search, tenantID: tenantID, foldedOnce: filters.isPlannedOnce, reading: reading))")
        }
        switch filters.author {
        case .none: break
        case .me: sql.append("\n  AND n.user_id = \(viewerID)")
        case .others: sql.append("\n  AND n.user_id <> \(viewerID)")
        case .user(let id): sql.append("\n  AND n.user_id = \(id)")
        case .username(let name):
            // The unique (tenant_id, lower(username)) index finds the one user; unknown: no rows.
            sql.append("""

                  AND n.user_id = (SELECT au.id FROM tenant_users au
                                   WHERE au.tenant_id = \(tenantID) AND lower(au.username) = lower(\(name)))
                """)
        }
        if let placeID = filters.placeID {
            sql.append("\n  AND n.place_id = \(placeID)")
        }
        if reading != .walk {
            sql.append(inTextSearchArea(filters, tenantID: tenantID))
        }
        return sql
    }

    /// The condition that the note lies in a cell that covers the search's area, which
    /// `notes_search` answers with the word's trigrams in the same scan. Empty without an area.
    /// A read through indexes needs it: with a text search area `condition` tests the box in
    /// degrees only and offers no spatial index.
    private static func inTextSearchArea(_ filters: NoteFilters, tenantID: Int64) -> PostgresQuery {
        guard let area = filters.textSearchArea else { return "" }
        let cells = area.longitudeRanges.map { west, east -> PostgresQuery in
            "search_cells(\(tenantID), \(west), \(area.minLat), \(east), \(area.maxLat))"
        }.joined(separator: " || ")
        // A subquery, so a statement planned once computes the cover once per run, not once
        // for every candidate row the index's recheck tests (it is an index condition either way).
        return "\n  AND search_cell_keys(n.tenant_id, n.location) && (SELECT \(cells))"
    }

    /// Finds the users whose names contain `q`, when the search looks at usernames,
    /// over the users' trigram index (of their folded names). Doing it first, as its own statement,
    /// hands the note query their ids as a value: planned for that value, `user_id =
    /// ANY(ids)` is estimated exactly (often: no one), where a subquery's result is a
    /// guess that can talk the planner out of the body's trigram index.
    ///
    /// At most `namesResolvedUpFront` of them: past that the name is a common one (`kim`), whose
    /// ids cost more to fetch than its notes (5,000 of 100,000 users: 6 ms of heap reads, the
    /// notes' page 3 ms), and the note query walks the newest notes testing each one's author
    /// by name through the users' primary key (`NoteFilters.Authors.many`).
    func resolvingUsernames(_ filters: NoteFilters, tenantID: Int64, on connection: some PostgresQuerying) async throws -> NoteFilters {
        guard var search = filters.search, search.field != .body else { return filters }
        // Prepared: every pattern gets the same plan, the users' trigram index (0.1-2 ms on
        // 10,000 users, 9 ms for a one-letter pattern that matches most), and no search
        // pays 0.2-1.2 ms to plan it again (bench/results/2026-11-23-full.md).
        let query: PostgresQuery = """
            SELECT u.id FROM tenant_users u
            WHERE u.tenant_id = \(tenantID) AND \(search.text.matches("u.username_folded"))
            LIMIT \(literal: Self.namesResolvedUpFront + 1)
            """
        let ids = try await connection.query(query).map { try $0.decode(Int64.self, column: 0) }
        search.authors = ids.count > Self.namesResolvedUpFront ? .many : .ids(ids)
        var resolved = filters
        resolved.search = search
        return resolved
    }

    /// Substring search, folded (`SearchText.matches`): `LIKE '%…%'` on the folded body is
    /// answered by `notes_search` (migration 0036), through the folded body's trigrams, or for two
    /// characters its bigrams and trigrams (`SearchText.pairLookups`), which a walk leaves out;
    /// usernames were matched beforehand (`resolved`), and their
    /// notes are found through the `(tenant_id, user_id, …)` index. For `in=all` the
    /// planner ORs the two bitmap scans.
    ///
    /// Planned once (`foldedOnce`), the ids are a parameter, which PostgreSQL does not hash in
    /// `= ANY`: a walk would compare each row with every id (200 for a common name). There a walk tests
    /// `IN (SELECT unnest(ids))`, a hashed subplan built once per run; a read through indexes
    /// (`NoteReading.throughIndex`) keeps `= ANY`, which the author index answers.
    ///
    /// Many authors (`NoteFilters.Authors.many`) have no ids: a walk looks up each row's author
    /// by the users' primary key (a scalar subquery, which the planner cannot turn into a join
    /// that reads every matching user first) and tests the name; a read through indexes asks
    /// for the matching users' ids as a subquery.
    private static func searchCondition(_ search: NoteFilters.Search, tenantID: Int64, foldedOnce: Bool, reading: NoteReading) -> PostgresQuery {
        let body = search.text.matches("n.body_folded", bigramIndexed: true, foldedOnce: foldedOnce, askingIndex: reading != .walk)
        let username: PostgresQuery
        switch search.authors {
        case .ids(let ids) where ids.isEmpty:
            // No name matches: say so plainly rather than give the planner an empty array to cost.
            return search.field == .username ? "false" : body
        case .ids(let ids) where foldedOnce && reading == .walk:
            username = "n.user_id IN (SELECT unnest(\(ids)::int8[]))"
        case .ids(let ids):
            username = "n.user_id = ANY (\(ids))"
        case .many where reading == .walk:
            let authorsName: PostgresQuery = """
                (SELECT au.username_folded FROM tenant_users au
                 WHERE au.tenant_id = \(tenantID) AND au.id = n.user_id)
                """
            username = search.text.matches(authorsName, foldedOnce: foldedOnce)
        case .many, .none:
            // Many, read through indexes; or unresolved (no caller should leave it so): the
            // same match as a subquery, right if planned blind.
            username = """
                n.user_id = ANY (ARRAY(SELECT su.id FROM tenant_users su
                                       WHERE su.tenant_id = \(tenantID) AND \(search.text.matches("su.username_folded"))))
                """
        }
        switch search.field {
        case .body: return body
        case .username: return username
        case .all: return "(\(body) OR \(username))"
        }
    }
}
