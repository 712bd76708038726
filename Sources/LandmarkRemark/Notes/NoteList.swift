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
    func resolved(tenantID: Int64, on connection: PostgresConnection) async throws -> NoteList {
        var list = self
        list.filters = try await filters.resolved(tenantID: tenantID, on: connection)
        return list
    }

    /// Runs the page query inside the caller's tenant transaction.
    func page(tenantID: Int64, viewerID: Int64, on connection: PostgresConnection) async throws -> Page {
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
        query.prepared = !filters.needsCustomPlan
        return query
    }

    /// Newest first. The keyset `(created_at, id) < (…)` is a row comparison the
    /// `(tenant_id, created_at DESC, id DESC)` index starts its scan from, so a deep
    /// page costs the same as the first. Notes written after the walk began sort
    /// before the cursor and never shift the pages still to come.
    private func newestStatement(tenantID: Int64, viewerID: Int64) -> PostgresQuery {
        var keyset: PostgresQuery = ""
        if case .newest(let micros, let id)? = cursor?.key {
            keyset = "\n  AND (n.created_at, n.id) < (timestamptz 'epoch' + \(micros) * interval '1 microsecond', \(id))"
        }
        return """
            SELECT \(Note.columns), (extract(epoch FROM n.created_at) * 1000000)::bigint
            FROM tenant_notes n
            JOIN tenant_users u ON u.tenant_id = n.tenant_id AND u.id = n.user_id
            WHERE \(filters.condition(tenantID: tenantID, viewerID: viewerID))\(keyset)
            ORDER BY n.created_at DESC, n.id DESC
            LIMIT \(limit + 1)
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
}
