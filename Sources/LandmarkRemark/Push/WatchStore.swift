import Foundation
import Postgres

/// The watches table (migration 0048): the areas each user watches, in the caller's tenant.
struct WatchStore: Sendable {
    /// The columns a `Watch` is read from, for `alias`.
    private static let columns: PostgresQuery = """
        w.id, w.label, ST_Y(w.center::geometry), ST_X(w.center::geometry), w.radius_m, w.place_id, w.created_at, w.updated_at
        """

    private static func watch(from row: PostgresRow) throws -> Watch {
        let (id, label, lat, lng, radius, placeID, createdAt, updatedAt) =
            try row.decode((Int64, String?, Double, Double, Int, Int64?, Date, Date).self)
        return Watch(id: id, label: label, lat: lat, lng: lng, radiusM: radius, placeID: placeID, createdAt: createdAt, updatedAt: updatedAt)
    }

    /// Where the place `placeID` is, if `viewerID` sees it.
    func placeCenter(tenantID: Int64, placeID: Int64, viewerID: Int64, on connection: PostgresConnection) async throws -> GeoPoint? {
        let rows = try await connection.query("""
            SELECT ST_Y(p.location::geometry), ST_X(p.location::geometry) FROM tenant_places p
            WHERE p.tenant_id = \(tenantID) AND p.id = \(placeID) AND \(Audience.seesPlace("p", tenantID: tenantID, viewerID: viewerID))
            """)
        return try rows.first.map { row in
            let (lat, lng) = try row.decode((Double, Double).self)
            return GeoPoint(lat: lat, lng: lng)
        }
    }

    /// Adds a watch unless the user has `limit` already; nil then. The user's row is locked
    /// first, so two creates at once are counted one after the other and the limit holds.
    func insert(
        tenantID: Int64, userID: Int64, center: GeoPoint, radius: Int, placeID: Int64?, label: String?, limit: Int,
        on connection: PostgresConnection
    ) async throws -> Watch? {
        try await connection.query("SELECT 1 FROM users WHERE tenant_id = \(tenantID) AND id = \(userID) FOR NO KEY UPDATE")
        let rows = try await connection.query("""
            WITH present AS (SELECT count(*) AS watches FROM watches WHERE tenant_id = \(tenantID) AND user_id = \(userID))
            INSERT INTO watches AS w (tenant_id, user_id, label, center, radius_m, place_id, created_at, updated_at)
            SELECT \(tenantID), \(userID), \(label), \(center.geography), \(radius), \(placeID), now(), now() FROM present
            WHERE watches < \(limit)
            RETURNING \(Self.columns)
            """)
        return try rows.first.map(Self.watch(from:))
    }

    /// The user's watches, oldest first.
    func list(tenantID: Int64, userID: Int64, on reads: some PostgresQuerying) async throws -> [Watch] {
        try await reads.query("""
            SELECT \(Self.columns) FROM watches w WHERE w.tenant_id = \(tenantID) AND w.user_id = \(userID) ORDER BY w.id
            """).map(Self.watch(from:))
    }

    func find(tenantID: Int64, userID: Int64, id: Int64, on reads: some PostgresQuerying) async throws -> Watch? {
        try await reads.query("""
            SELECT \(Self.columns) FROM watches w WHERE w.tenant_id = \(tenantID) AND w.user_id = \(userID) AND w.id = \(id)
            """).first.map(Self.watch(from:))
    }

    /// Changes the fields given; nil when the user has no such watch. A watch of a place is
    /// not moved (`near` on it is `placeWatchMoved`, found by the caller from the row locked first).
    func update(
        tenantID: Int64, userID: Int64, id: Int64, patch: WatchPatch, on connection: PostgresConnection
    ) async throws -> Watch? {
        let center: PostgresQuery = patch.near.map { $0.geography } ?? "w.center"
        let label: PostgresQuery = patch.label.map { "\($0)::text" } ?? "w.label"
        let rows = try await connection.query("""
            UPDATE watches w SET center = \(center), radius_m = coalesce(\(patch.radius)::integer, w.radius_m), label = \(label), updated_at = now()
            WHERE w.tenant_id = \(tenantID) AND w.user_id = \(userID) AND w.id = \(id)
            RETURNING \(Self.columns)
            """)
        return try rows.first.map(Self.watch(from:))
    }

    /// Deletes the user's watch; false if they have none by that id.
    func delete(tenantID: Int64, userID: Int64, id: Int64, on connection: PostgresConnection) async throws -> Bool {
        try await !connection.query("""
            DELETE FROM watches WHERE tenant_id = \(tenantID) AND user_id = \(userID) AND id = \(id) RETURNING 1
            """).isEmpty
    }
}
