import Postgres

/// The places table, always as the caller's tenant: in its transaction, or read as pipelined reads.
struct PlaceStore: Sendable {
    func create(tenantID: Int64, creatorID: Int64, name: String, lat: Double, lng: Double, on connection: PostgresConnection) async throws -> Place {
        let rows = try await connection.query("""
            INSERT INTO places (tenant_id, name, location, kind, created_by)
            VALUES (\(tenantID), \(name), ST_SetSRID(ST_MakePoint(\(lng), \(lat)), 4326)::geography, 'custom', \(creatorID))
            RETURNING id
            """)
        let id = try rows[0].decode(Int64.self, column: 0)
        guard let place = try await find(tenantID: tenantID, id: id, viewer: creatorID, on: connection) else {
            throw AppError.internalError
        }
        return place
    }

    func find(tenantID: Int64, id: Int64, viewer: Int64, on connection: some PostgresQuerying) async throws -> Place? {
        let rows = try await connection.query("""
            SELECT \(Place.columns(viewer: viewer)) FROM tenant_places p WHERE p.tenant_id = \(tenantID) AND p.id = \(id)
            """)
        return try rows.first.map(Place.init(row:))
    }

    /// Checks that `id` is a custom place created by `userID`: `404` when there is
    /// no such place in the tenant, `403` for default places and others' places.
    func requireEditable(tenantID: Int64, id: Int64, userID: Int64, on connection: PostgresConnection) async throws {
        let rows = try await connection.query("""
            SELECT kind, created_by FROM places WHERE tenant_id = \(tenantID) AND id = \(id) FOR UPDATE
            """)
        guard let row = rows.first else { throw AppError.notFound("place") }
        let (kind, creator) = try row.decode((String, Int64?).self)
        guard kind == "custom" else { throw AppError.forbidden("default places are curated by the operator and cannot be changed") }
        guard creator == userID else { throw AppError.forbidden("only the creator of a place can change it") }
    }

    func rename(tenantID: Int64, id: Int64, name: String, on connection: PostgresConnection) async throws {
        try await connection.query("""
            UPDATE places SET name = \(name), updated_at = now() WHERE tenant_id = \(tenantID) AND id = \(id)
            """)
    }

    /// Deletes the place; its notes stay, with `place_id` set to null by the foreign key.
    func delete(tenantID: Int64, id: Int64, on connection: PostgresConnection) async throws {
        try await connection.query("DELETE FROM places WHERE tenant_id = \(tenantID) AND id = \(id)")
    }
}
