import Credentials
import Postgres

/// One page of `GET /v1/places`: `near`, `radius_m`, `bbox`, `q` (name), `limit`,
/// `cursor`, as for notes. Nearest first with `near`, else newest first.
struct PlaceList: Sendable {
    var near: NoteFilters.Point?
    var radius: Double?
    var bbox: BoundingBox?
    var search: NoteFilters.Search?
    let limit: Int
    var cursor: NoteCursor?

    typealias Page = ListPage<Place>

    /// Reads the parameters with the notes' own parsers, so both lists accept exactly the same spellings.
    init(_ parameters: inout QueryParameters) throws {
        let filters = try NoteFilters(places: &parameters)
        near = filters.near
        radius = filters.radius
        bbox = filters.bbox
        search = filters.search
        limit = try parameters.integer("limit", in: 1...200) ?? NoteList.defaultLimit
        if let text = parameters.string("cursor") {
            cursor = try NoteCursor(parameter: text, nearest: near != nil, fingerprint: fingerprint)
        }
        try parameters.finish()
    }

    var fingerprint: [UInt8] {
        var canonical = "places-v1"
        if let near { canonical += "|near=\(near.lat),\(near.lng)" }
        if let radius { canonical += "|radius=\(radius)" }
        if let bbox { canonical += "|bbox=\(bbox.canonical)" }
        if let search { canonical += "|q=\(search.text.utf8.count):\(search.text)" }
        return Array(Tokens.sha256(canonical).prefix(8))
    }

    func page(tenantID: Int64, viewerID: Int64, on connection: some PostgresQuerying) async throws -> Page {
        let rows = try await connection.query(statement(tenantID: tenantID, viewerID: viewerID))
        var items: [Place] = []
        var keys: [NoteCursor.Key] = []
        for row in rows.prefix(limit) {
            var place = try Place(row: row)
            if near != nil {
                let distance = try row.decode(Double.self, column: Place.columnCount)
                place.distance = distance
                keys.append(.nearest(distance: distance, id: place.id))
            } else {
                keys.append(.newest(createdMicros: try row.decode(Int64.self, column: Place.columnCount), id: place.id))
            }
            items.append(place)
        }
        let next = rows.count > limit ? keys.last.map { NoteCursor(key: $0).encoded(fingerprint: fingerprint) } : nil
        return Page(items: items, nextCursor: next)
    }

    /// The page statement: `limit + 1` rows so the caller learns whether more follow.
    func statement(tenantID: Int64, viewerID: Int64) -> PostgresQuery {
        var query = near.map { nearestStatement(from: $0, tenantID: tenantID, viewerID: viewerID) }
            ?? newestStatement(tenantID: tenantID, viewerID: viewerID)
        query.prepared = search == nil
        return query
    }

    /// The filters over `p`; ILIKE on the name is served by the trigram index on (tenant_id, name).
    private func condition(tenantID: Int64) -> PostgresQuery {
        var sql: PostgresQuery = "p.tenant_id = \(tenantID)"
        if let near, let radius { sql.append("\n  AND ST_DWithin(p.location, \(near.geography), \(radius))") }
        if let bbox { sql.append("\n  AND \(bbox.condition(alias: "p"))") }
        if let search { sql.append("\n  AND p.name ILIKE \(search.pattern)") }
        return sql
    }

    /// Newest first, keyset on (created_at, id) like notes, in the order of the
    /// `places_newest` index (migration 0007): the page is read in order, and the
    /// per-place note count runs for the returned rows only.
    private func newestStatement(tenantID: Int64, viewerID: Int64) -> PostgresQuery {
        var keyset: PostgresQuery = ""
        if case .newest(let micros, let id)? = cursor?.key {
            keyset = "\n  AND (p.created_at, p.id) < (timestamptz 'epoch' + \(micros) * interval '1 microsecond', \(id))"
        }
        return """
            SELECT \(Place.columns(viewer: viewerID)), (extract(epoch FROM p.created_at) * 1000000)::bigint
            FROM tenant_places p
            WHERE \(condition(tenantID: tenantID))\(keyset)
            ORDER BY p.created_at DESC, p.id DESC
            LIMIT \(limit + 1)
            """
    }

    /// Nearest first in exact spheroid order: the same two steps as `NoteList`'s nearest
    /// statement (KNN on the sphere finds a radius that surely holds the page, then the
    /// rows within it are sorted by spheroid distance and id, the keyset's own key).
    private func nearestStatement(from point: NoteFilters.Point, tenantID: Int64, viewerID: Int64) -> PostgresQuery {
        let origin = point.geography
        var keyset: PostgresQuery = ""
        if case .nearest(let distance, let id)? = cursor?.key {
            keyset = "\n  AND (ST_Distance(p.location, \(origin)), p.id) > (\(distance)::float8, \(id))"
        }
        let filter = condition(tenantID: tenantID)
        return """
            WITH sphere_nearest AS (
                SELECT ST_Distance(p.location, \(origin)) AS distance
                FROM tenant_places p
                WHERE \(filter)\(keyset)
                ORDER BY p.location <-> \(origin)
                LIMIT \(limit + 1)
            )
            SELECT \(Place.columns(viewer: viewerID)), ST_Distance(p.location, \(origin)) AS distance
            FROM tenant_places p
            WHERE \(filter)\(keyset)
              AND ST_DWithin(p.location, \(origin), (SELECT max(distance) + 0.001 FROM sphere_nearest))
            ORDER BY distance, p.id
            LIMIT \(limit + 1)
            """
    }
}

extension NoteFilters {
    /// The subset of the notes' filters that places take: `near`, `radius_m`, `bbox`, `q`.
    /// The notes-only ones are refused, as any unknown parameter is.
    init(places parameters: inout QueryParameters) throws {
        for name in ["in", "author", "place_id"] where parameters.contains(name) {
            throw AppError.malformed("\(name) is not a known query parameter here")
        }
        try self.init(&parameters, searchesNotes: false)
    }
}
