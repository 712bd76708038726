import Foundation
import Postgres

/// The places table, always as the caller's tenant: in its transaction, or as pipelined reads.
struct PlaceStore: Sendable {
    /// The columns `place(from:)` reads over `p` (places); `viewer` decides which notes count.
    /// The sub-selects name the tenant itself, not `p`'s: on Citus a statement goes to one
    /// shard only when every table in it is filtered by a constant tenant.
    static func placeColumns(viewer: Int64, tenantID: Int64) -> PostgresQuery {
        """
        p.id, p.name, ST_Y(p.location::geometry), ST_X(p.location::geometry), p.kind, p.created_by,
        (SELECT count(*) FROM tenant_notes n
         WHERE n.tenant_id = \(tenantID) AND n.place_id = p.id AND \(Audience.seesNote("n", tenantID: tenantID, viewerID: viewer))),
        p.created_at,
        (SELECT cu.username FROM tenant_users cu WHERE cu.tenant_id = \(tenantID) AND cu.id = p.created_by),
        p.moderation, p.photos
        """
    }

    static let placeColumnCount = 11

    static func place(from row: PostgresRow) throws -> Place {
        // Column by column with concrete types, as `NoteStore.note(from:viewer:)` and for the same reason.
        let id = try row.decode(Int64.self, column: 0)
        let name = try row.decode(String.self, column: 1)
        let lat = try row.decode(Double.self, column: 2)
        let lng = try row.decode(Double.self, column: 3)
        // The table's CHECK allows only these two.
        let kind = Place.Kind(rawValue: try row.decode(String.self, column: 4)) ?? .custom
        let creatorID = try row.decode(Int64?.self, column: 5)
        let noteCount = try row.decode(Int.self, column: 6)
        let createdAt = try row.decode(Date.self, column: 7)
        let creatorName = try row.decode(String?.self, column: 8)
        let createdBy = creatorID.flatMap { id in creatorName.map { UserSummary(id: id, username: $0) } }
        let moderation = try row.decode(String?.self, column: 9).flatMap(Place.Moderation.init(rawValue:))
        let photos = PhotoSummaries.photos(try row.decode([Int64].self, column: 10))
        return Place(
            id: id, name: name, lat: lat, lng: lng, kind: kind, createdBy: createdBy, noteCount: noteCount, createdAt: createdAt,
            moderation: moderation, photos: photos)
    }

    /// Adds a custom place, `held` for a moderator when the tenant's word list says so, and
    /// answers it from the insert itself: no note is at it yet, and its creator is the caller.
    func create(
        tenantID: Int64, creatorID: Int64, creatorName: String, name: String, lat: Double, lng: Double, held: Bool = false,
        on connection: some PostgresQuerying
    ) async throws -> Place {
        let rows = try await connection.query("""
            INSERT INTO places (tenant_id, created_by, name, location, kind, moderation)
            VALUES (\(tenantID), \(creatorID), \(name)::text, ST_SetSRID(ST_MakePoint(\(lng)::float8, \(lat)::float8), 4326)::geography,
                    'custom', \(held ? "pending" : nil)::text)
            RETURNING \(Self.returnedColumns(creatorName: creatorName))
            """)
        return try Self.place(from: rows[0])
    }

    /// `placeColumns` in an insert's RETURNING, for a place just made by `creatorName`.
    private static func returnedColumns(creatorName: String) -> PostgresQuery {
        """
        id, name, ST_Y(location::geometry), ST_X(location::geometry), kind, created_by, 0::bigint, created_at,
        \(creatorName)::text, moderation, photos
        """
    }

    func find(tenantID: Int64, id: Int64, viewer: Int64, on connection: some PostgresQuerying) async throws -> Place? {
        let rows = try await connection.query("""
            SELECT \(Self.placeColumns(viewer: viewer, tenantID: tenantID)) FROM tenant_places p
            WHERE p.tenant_id = \(tenantID) AND p.id = \(id) AND \(Audience.seesPlace("p", tenantID: tenantID, viewerID: viewer))
            """)
        return try rows.first.map(Self.place(from:))
    }

    /// Checks that `id` is a custom place created by `userID`: `notFound` when there is
    /// no such place in the tenant, `curated` for default places, `notCreator` for others' places.
    func requireEditable(tenantID: Int64, id: Int64, userID: Int64, on connection: PostgresConnection) async throws {
        let rows = try await connection.query("""
            SELECT kind, created_by FROM places WHERE tenant_id = \(tenantID) AND id = \(id) FOR UPDATE
            """)
        guard let row = rows.first else { throw PlaceError.notFound }
        let (kind, creator) = try row.decode((String, Int64?).self)
        guard kind == "custom" else { throw PlaceError.curated }
        guard creator == userID else { throw PlaceError.notCreator }
    }

    func rename(tenantID: Int64, id: Int64, name: String, held: Bool = false, on connection: some PostgresQuerying) async throws {
        try await connection.query("""
            UPDATE places SET name = \(name), updated_at = now(), moderation = CASE WHEN \(held) THEN 'pending' ELSE moderation END
            WHERE tenant_id = \(tenantID) AND id = \(id)
            """)
    }

    /// Deletes the place; its notes stay, with `place_id` set to null by the foreign key.
    func delete(tenantID: Int64, id: Int64, on connection: some PostgresQuerying) async throws {
        try await connection.query("DELETE FROM places WHERE tenant_id = \(tenantID) AND id = \(id)")
    }
}
