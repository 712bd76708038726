import Postgres

/// One page of `GET /v1/notes` (or `/v1/users/{username}/notes`): nearest first when
/// `near` is given, else newest first, with keyset pagination on the order's own key.
struct NoteList: Sendable {
    static let defaultLimit = 50

    private(set) var filters: NoteFilters
    let limit: Int
    let cursor: NoteCursor?

    typealias Page = ListPage<Note>

    /// Reads the list's parameters; unknown ones are refused.
    init(_ parameters: inout QueryParameters, author: NoteFilters.Author? = nil) throws {
        filters = try NoteFilters(&parameters, author: author)
        limit = try parameters.integer("limit", in: 1...200) ?? Self.defaultLimit
        if let text = parameters.string("cursor") {
            cursor = try NoteCursor(parameter: text, nearest: filters.near != nil, fingerprint: filters.fingerprint)
        } else {
            cursor = nil
        }
        try parameters.finish()
    }

    /// The list with its username matches looked up (see `NoteFilters.resolved`).
    func resolved(tenantID: Int64, on connection: some PostgresQuerying) async throws -> NoteList {
        var list = self
        list.filters = try await filters.resolved(tenantID: tenantID, on: connection)
        return list
    }

    /// Runs the page query as the caller's tenant (in its transaction, or as pipelined reads).
    func page(tenantID: Int64, viewerID: Int64, on connection: some PostgresQuerying) async throws -> Page {
        let list = try await resolved(tenantID: tenantID, on: connection)
        let rows = try await connection.query(list.statement(tenantID: tenantID, viewerID: viewerID))
        var items: [Note] = []
        var keys: [NoteCursor.Key] = []
        for row in rows.prefix(limit) {
            var note = try Note(row: row, viewer: viewerID)
            if filters.near != nil {
                let distance = try row.decode(Double.self, column: Note.columnCount)
                note.distance = distance
                keys.append(.nearest(distance: distance, id: note.id))
            } else {
                keys.append(.newest(createdMicros: try row.decode(Int64.self, column: Note.columnCount), id: note.id))
            }
            items.append(note)
        }
        // One row more than the page was asked for: there is a next page.
        let next = rows.count > limit ? keys.last.map { NoteCursor(key: $0).encoded(fingerprint: filters.fingerprint) } : nil
        return Page(items: items, nextCursor: next)
    }

    /// The page statement: `limit + 1` rows so the caller learns whether more follow.
    func statement(tenantID: Int64, viewerID: Int64) -> PostgresQuery {
        var query = filters.near.map { nearestStatement(from: $0, tenantID: tenantID, viewerID: viewerID) }
            ?? newestStatement(tenantID: tenantID, viewerID: viewerID)
        // A walking newest-first page decides between its plans as it runs, so one plan fits
        // every pattern and planning it once per connection saves ~2 ms a search. Authors
        // matched by name are the exception: PostgreSQL hashes `user_id = ANY(ids)` only when
        // the array is known at planning (500 ids, compared one by one on every walked row,
        // cost 8.3 ms a page against 5.7 ms planned each time; bench/results/2026-11-23-search.md).
        if filters.near == nil && filters.walksNewestFirst {
            query.prepared = (filters.search?.userIDs ?? []).isEmpty
        } else {
            query.prepared = !filters.needsCustomPlan
        }
        return query
    }

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
    /// estimates a box from a coarse grid (notes crowd into cities), and an ILIKE pattern is
    /// estimated from a 100-entry sample of bodies, so a rare word that happens to be in it
    /// looks like 1 note in 100. Each wrong guess is costly: sorting every note of a dense
    /// city (1 s on the benchmark's London), or walking a year of notes for a rare word
    /// (0.4 s). So the statement decides from what it sees, not from estimates (bench/results/
    /// 2026-11-23-search.md), and the plan is the same for every value, so it is prepared:
    ///
    /// 1. `walked`: the matches among the newest `newestWalk` notes (the `notes_newest`
    ///    index, filtered, stopping at `limit + 1`). Enough of them, or no notes beyond,
    ///    and that is the page: a common word or a dense box.
    /// 2. `further`: with at least `newestWalkGoesOn` matches in the walk (1 in 200), the walk
    ///    goes on from where it stopped (`edge`) through at most `newestWalkFurther` more notes.
    ///    Walked rows are all newer than `edge`, further ones older, so the walked rows and
    ///    the first further ones (as many as make `limit + 1`) are the page, when there are
    ///    that many or the notes ran out.
    /// 3. `matches`: otherwise the matches are rare: every one of them, through the trigram or
    ///    spatial index (a CTE without ORDER BY, so an estimate cannot turn it back into a
    ///    walk), sorted. This branch alone is the page.
    ///
    /// Each branch is gated by one-time filters on the counts before it, so a branch that is
    /// not needed never runs. Either way the rows are exactly the first `limit + 1` matches.
    private func newestStatement(tenantID: Int64, viewerID: Int64) -> PostgresQuery {
        var keyset: PostgresQuery = ""
        if case .newest(let micros, let id)? = cursor?.key {
            keyset = "\n  AND (n.created_at, n.id) < (timestamptz 'epoch' + \(micros) * interval '1 microsecond', \(id))"
        }
        let condition = filters.condition(tenantID: tenantID, viewerID: viewerID)
        guard filters.walksNewestFirst else {
            return """
                SELECT \(Note.columns), (extract(epoch FROM n.created_at) * 1000000)::bigint
                FROM (
                    SELECT n.* FROM tenant_notes n
                    WHERE \(condition)\(keyset)
                    ORDER BY n.created_at DESC, n.id DESC
                    LIMIT \(limit + 1)
                ) n
                JOIN tenant_users u ON u.tenant_id = n.tenant_id AND u.id = n.user_id
                ORDER BY n.created_at DESC, n.id DESC
                """
        }
        let rows = limit + 1
        // The walk's sizes are constants of this code, written into the SQL: a generic plan
        // must see them (a LIMIT that is a parameter is guessed at a tenth of the table).
        let walk: PostgresQuery = "\(unsafeSQL: String(Self.newestWalk))"
        let walkEdge: PostgresQuery = "\(unsafeSQL: String(Self.newestWalk - 1))"
        let further: PostgresQuery = "\(unsafeSQL: String(Self.newestWalkFurther))"
        let goesOn: PostgresQuery = "\(unsafeSQL: String(Self.newestWalkGoesOn))"
        let pastEdge: PostgresQuery = "(n.created_at, n.id) < ((SELECT created_at FROM edge), (SELECT id FROM edge))"
        return """
            WITH walked AS MATERIALIZED (
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
            ),
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
                SELECT n.* FROM tenant_notes n
                WHERE \(condition)\(keyset)
                  AND (SELECT needed FROM fallback)
            ),
            page AS (
                SELECT * FROM walked WHERE NOT (SELECT needed FROM fallback)
                UNION ALL
                SELECT * FROM further WHERE NOT (SELECT needed FROM fallback)
                UNION ALL
                (SELECT * FROM matches ORDER BY created_at DESC, id DESC LIMIT \(rows))
            )
            SELECT \(Note.columns), (extract(epoch FROM n.created_at) * 1000000)::bigint
            FROM page n
            JOIN tenant_users u ON u.tenant_id = n.tenant_id AND u.id = n.user_id
            ORDER BY n.created_at DESC, n.id DESC
            """
    }

    /// Nearest first, in exact spheroid order, in two steps of one statement.
    ///
    /// KNN (`ORDER BY location <-> point`) lets the GiST index hand out rows nearest
    /// first without reading the rest, but for geography `<->` measures on the sphere,
    /// which can order two notes differently from the spheroid (by up to about 0.5%).
    /// So `sphere_nearest` takes the first `limit + 1` rows past the cursor in sphere
    /// order and notes the largest spheroid distance among them, D. At least that many
    /// rows lie within D, so the true page lies within D too: `page` fetches the rows
    /// within D (plus a millimetre against rounding) through the same index, with
    /// ST_DWithin, and sorts those few by the spheroid distance and id. The keyset is
    /// that same `(ST_Distance, id)` pair, so paging is exact even among equal distances.
    private func nearestStatement(from point: NoteFilters.Point, tenantID: Int64, viewerID: Int64) -> PostgresQuery {
        let origin = point.geography
        var keyset: PostgresQuery = ""
        if case .nearest(let distance, let id)? = cursor?.key {
            keyset = "\n  AND (ST_Distance(n.location, \(origin)), n.id) > (\(distance)::float8, \(id))"
        }
        let condition = filters.condition(tenantID: tenantID, viewerID: viewerID)
        if filters.narrowsNearest {
            return filteredNearestStatement(origin: origin, keyset: keyset, condition: condition, tenantID: tenantID, viewerID: viewerID)
        }
        return """
            WITH sphere_nearest AS (
                SELECT ST_Distance(n.location, \(origin)) AS distance
                FROM tenant_notes n
                WHERE \(condition)\(keyset)
                ORDER BY n.location <-> \(origin)
                LIMIT \(limit + 1)
            ),
            page AS (
                SELECT n.*, ST_Distance(n.location, \(origin)) AS distance
                FROM tenant_notes n
                WHERE \(condition)\(keyset)
                  AND ST_DWithin(n.location, \(origin), (SELECT max(distance) + 0.001 FROM sphere_nearest))
                ORDER BY distance, n.id
                LIMIT \(limit + 1)
            )
            SELECT \(Note.columns), n.distance
            FROM page n
            JOIN tenant_users u ON u.tenant_id = n.tenant_id AND u.id = n.user_id
            ORDER BY n.distance, n.id
            """
    }

    /// How many nearest notes a filtered nearest page looks through before it sorts every match instead.
    static let nearestWalk = 500

    /// Nearest first with a filter the KNN walk cannot use (text, author, viewport, place).
    ///
    /// Walking nearest first and filtering finds a common word at once, but for a rare
    /// word, or one author's notes, it walks every note in range (1.9 s for `axolotl`
    /// within 10 km of London). So `sphere_nearest` looks at no more than the
    /// `nearestWalk` nearest notes of the unfiltered list, and the walk decides the page
    /// when `limit + 1` of them match (the largest spheroid distance among those bounds
    /// the page, as in the unfiltered statement) or when it saw every note in range (its
    /// matches are all there are). Otherwise (fewer than 1 in 10 of the nearest notes
    /// match) `by_filter` runs instead of `by_walk` (each is gated by a one-time filter on
    /// the walk's counts): every match in range, found through the filter's own index (trigram,
    /// author, viewport, place) and sorted by spheroid distance. Its range check is
    /// `_ST_DWithin`, ST_DWithin's own test without the index support, so the planner
    /// cannot trade that index for a walk of the spatial one (PostGIS underestimates how
    /// many notes a city holds). The page is exact either way.
    private func filteredNearestStatement(
        origin: PostgresQuery, keyset: PostgresQuery, condition: PostgresQuery, tenantID: Int64, viewerID: Int64
    ) -> PostgresQuery {
        var unfiltered = filters
        unfiltered.search = nil
        unfiltered.author = nil
        unfiltered.bbox = nil
        unfiltered.placeID = nil
        let base = unfiltered.condition(tenantID: tenantID, viewerID: viewerID)
        let walk = Self.nearestWalk
        var anyDistance = filters
        anyDistance.radius = nil
        var inRange = anyDistance.condition(tenantID: tenantID, viewerID: viewerID)
        if let radius = filters.radius {
            inRange.append("\n  AND _ST_DWithin(n.location, \(origin), \(radius), true)")
        }
        return """
            WITH candidates AS MATERIALIZED (
                SELECT n.*, n.location <-> \(origin) AS sphere
                FROM tenant_notes n
                WHERE \(base)\(keyset)
                ORDER BY n.location <-> \(origin)
                LIMIT \(walk)
            ),
            sphere_nearest AS (
                SELECT ST_Distance(n.location, \(origin)) AS distance
                FROM candidates n
                WHERE \(condition)
                ORDER BY n.sphere
                LIMIT \(limit + 1)
            ),
            decided AS (
                SELECT (SELECT count(*) FROM sphere_nearest) = \(limit + 1)
                       OR (SELECT count(*) FROM candidates) < \(walk) AS by_walk
            ),
            by_walk AS MATERIALIZED (
                SELECT n.*, ST_Distance(n.location, \(origin)) AS distance
                FROM tenant_notes n
                WHERE \(condition)\(keyset)
                  AND (SELECT by_walk FROM decided)
                  AND ST_DWithin(n.location, \(origin), (SELECT max(distance) + 0.001 FROM sphere_nearest))
                ORDER BY distance, n.id
                LIMIT \(limit + 1)
            ),
            by_filter AS MATERIALIZED (
                SELECT n.*, ST_Distance(n.location, \(origin)) AS distance
                FROM tenant_notes n
                WHERE \(inRange)\(keyset)
                  AND NOT (SELECT by_walk FROM decided)
                ORDER BY distance, n.id
                LIMIT \(limit + 1)
            )
            SELECT \(Note.columns), n.distance
            FROM (SELECT * FROM by_walk UNION ALL SELECT * FROM by_filter) n
            JOIN tenant_users u ON u.tenant_id = n.tenant_id AND u.id = n.user_id
            ORDER BY n.distance, n.id
            """
    }
}
