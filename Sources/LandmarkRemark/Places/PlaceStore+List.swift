import Postgres

extension PlaceStore {
    /// Runs a page of the list as the caller's tenant (in its transaction, or as pipelined reads).
    func page(_ list: PlaceList, tenantID: Int64, viewerID: Int64, on connection: some PostgresQuerying) async throws -> PlacePage {
        let rows = try await connection.query(Self.statement(list, tenantID: tenantID, viewerID: viewerID))
        return try list.page.page(from: rows, keyColumn: Self.placeColumnCount) { row, distance in
            var place = try Self.place(from: row)
            place.distanceM = distance
            return (place, place.id)
        }
    }

    /// The page statement: `limit + 1` rows so the caller learns whether more follow.
    static func statement(_ list: PlaceList, tenantID: Int64, viewerID: Int64) -> PostgresQuery {
        var query = list.filters.near.map { nearestStatement(list, from: $0, tenantID: tenantID, viewerID: viewerID) }
            ?? newestStatement(list, tenantID: tenantID, viewerID: viewerID)
        query.prepared = list.filters.search == nil
        return query
    }

    /// What `viewer` may see (`Audience`) and the filters, over `p`; the name's search by the trigram index on (tenant_id, name_folded).
    private static func condition(_ filters: MapFilters, tenantID: Int64, viewerID: Int64) -> PostgresQuery {
        var sql: PostgresQuery = "p.tenant_id = \(tenantID) AND \(Audience.seesPlace("p", tenantID: tenantID, viewerID: viewerID))"
        if let near = filters.near, let radius = filters.radius { sql.append("\n  AND ST_DWithin(p.location, \(near.geography), \(radius))") }
        if let bbox = filters.bbox { sql.append("\n  AND \(bbox.condition(location: "p.location::geometry"))") }
        if let search = filters.search { sql.append("\n  AND \(search.matches("p.name_folded"))") }
        return sql
    }

    /// Newest first, keyset on (created_at, id) like notes, in the order of the
    /// `places_newest` index (migration 0007): the page is read in order, and the
    /// per-place note count runs for the returned rows only.
    private static func newestStatement(_ list: PlaceList, tenantID: Int64, viewerID: Int64) -> PostgresQuery {
        let limit = list.limit
        let keyset: PostgresQuery = list.page.timeKeyset("p.created_at", "p.id").map { "\n  AND \($0)" } ?? ""
        return """
            SELECT \(Self.placeColumns(viewer: viewerID, tenantID: tenantID)), (extract(epoch FROM p.created_at) * 1000000)::bigint
            FROM tenant_places p
            WHERE \(condition(list.filters, tenantID: tenantID, viewerID: viewerID))\(keyset)
            ORDER BY p.created_at DESC, p.id DESC
            LIMIT \(limit + 1)
            """
    }

    /// Nearest first in exact spheroid order (`ExactNearest`), the note counts computed for
    /// the page's rows only.
    private static func nearestStatement(_ list: PlaceList, from point: GeoPoint, tenantID: Int64, viewerID: Int64) -> PostgresQuery {
        let origin = point.geography
        var condition = condition(list.filters, tenantID: tenantID, viewerID: viewerID)
        condition.append(ExactNearest.keyset("p", origin: origin, after: list.cursor?.key))
        return """
            \(ExactNearest.page(of: "tenant_places", as: "p", where: condition, origin: origin, limit: list.limit))
            SELECT \(Self.placeColumns(viewer: viewerID, tenantID: tenantID)), p.distance
            FROM page p
            ORDER BY p.distance, p.id
            """
    }
}
