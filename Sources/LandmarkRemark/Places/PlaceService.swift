import Logging
import Postgres

/// The places' workflows and their transactions (see `NoteService`): `PlaceStore` runs the
/// statements, `PlacesController` translates HTTP.
struct PlaceService: Sendable {
    let pool: PostgresPool
    let places: PlaceStore
    /// The tenant's terms and word list (`TenantStore.WritePolicy`), read in each write's transaction.
    let tenants = TenantStore()

    func create(_ draft: PlaceDraft, by identity: Identity, logger: Logger) async throws -> Place {
        try await pool.withTenantTransaction(identity.tenantID, logger: logger) { connection in
            let held = try await tenants.writePolicy(tenantID: identity.tenantID, userID: identity.userID, on: connection)
                .holds(draft.name, field: "name")
            return try await places.create(
                tenantID: identity.tenantID, creatorID: identity.userID, name: draft.name, lat: draft.lat, lng: draft.lng, held: held,
                on: connection)
        }
    }

    func page(_ list: PlaceList, for identity: Identity, logger: Logger) async throws -> PlacePage {
        try await pool.withTenantReads(identity.tenantID, logger: logger) {
            try await places.page(list, tenantID: identity.tenantID, viewerID: identity.userID, on: $0)
        }
    }

    func find(_ id: Int64, for identity: Identity, logger: Logger) async throws -> Place {
        let place = try await pool.withTenantReads(identity.tenantID, logger: logger) {
            try await places.find(tenantID: identity.tenantID, id: id, viewer: identity.userID, on: $0)
        }
        guard let place else { throw PlaceError.notFound }
        return place
    }

    /// Renames a custom place; only its creator may, and default places not at all.
    func rename(_ id: Int64, to name: String, by identity: Identity, logger: Logger) async throws -> Place {
        let place = try await pool.withTenantTransaction(identity.tenantID, logger: logger) { connection in
            try await places.requireEditable(tenantID: identity.tenantID, id: id, userID: identity.userID, on: connection)
            let held = try await tenants.writePolicy(tenantID: identity.tenantID, userID: identity.userID, on: connection)
                .holds(name, field: "name")
            try await places.rename(tenantID: identity.tenantID, id: id, name: name, held: held, on: connection)
            return try await places.find(tenantID: identity.tenantID, id: id, viewer: identity.userID, on: connection)
        }
        guard let place else { throw PlaceError.notFound }
        return place
    }

    /// Deletes a custom place; the same rule as renaming.
    func delete(_ id: Int64, by identity: Identity, logger: Logger) async throws {
        try await pool.withTenantTransaction(identity.tenantID, logger: logger) { connection in
            try await places.requireEditable(tenantID: identity.tenantID, id: id, userID: identity.userID, on: connection)
            try await places.delete(tenantID: identity.tenantID, id: id, on: connection.committing)
        }
    }
}
