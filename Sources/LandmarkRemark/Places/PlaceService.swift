import Logging
import Postgres

/// The places' workflows and their transactions (see `NoteService`): `PlaceStore` runs the
/// statements, `PlacesController` translates HTTP.
struct PlaceService: Sendable {
    let pool: PostgresPool
    let places: PlaceStore
    /// The word lists a write may apply without reading them first (shared with the notes).
    let writeRules: WriteRulesCache

    /// Adds a custom place, screened as a note's create is (`NoteService.create`): with the
    /// tenant's word list kept, one round trip.
    func create(_ draft: PlaceDraft, by identity: Identity, logger: Logger) async throws -> Place {
        let (tenantID, userID) = (identity.tenantID, identity.userID)
        return try await writeRules.screened(draft.name, field: "name", tenantID: tenantID, userID: userID) { screening in
            try await pool.withTenantTransaction(tenantID, logger: logger) { connection in
                try await places.create(
                    tenantID: tenantID, creatorID: userID, creatorName: identity.username, name: draft.name, lat: draft.lat,
                    lng: draft.lng, held: try await screening.held(on: connection), on: screening.guarding(connection.committing))
            }
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

    /// Renames a custom place; only its creator may, and default places not at all. Screened
    /// as a create is.
    func rename(_ id: Int64, to name: String, by identity: Identity, logger: Logger) async throws -> Place {
        let place = try await writeRules.screened(name, field: "name", tenantID: identity.tenantID, userID: identity.userID) { screening in
            try await pool.withTenantTransaction(identity.tenantID, logger: logger) { connection in
                try await places.requireEditable(tenantID: identity.tenantID, id: id, userID: identity.userID, on: connection)
                try await places.rename(
                    tenantID: identity.tenantID, id: id, name: name, held: try await screening.held(on: connection),
                    on: screening.guarding(connection))
                return try await places.find(tenantID: identity.tenantID, id: id, viewer: identity.userID, on: connection)
            }
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
