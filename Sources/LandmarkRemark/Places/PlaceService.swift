import Logging
import Postgres

/// The places' workflows and their transactions (see `NoteService`): `PlaceStore` runs the
/// statements, `PlacesController` translates HTTP.
struct PlaceService: Sendable {
    let pool: PostgresPool
    let places: PlaceStore
    /// The tenant's terms and word list (`TenantStore.WritePolicy`), read in each write's transaction.
    let tenants = TenantStore()
    /// The word lists a create may apply without reading them first (shared with the notes).
    let writeRules: WriteRulesCache

    /// Adds a custom place. As a note's create (`NoteService.create`): with the tenant's word
    /// list kept, one round trip (`BEGIN`, the settings, the check that the rest of the policy
    /// holds, the insert, `COMMIT`); when the check finds the policy changed or refusing, or
    /// nothing is kept, the policy is read first, in the insert's transaction, and kept.
    func create(_ draft: PlaceDraft, by identity: Identity, logger: Logger) async throws -> Place {
        let (tenantID, userID) = (identity.tenantID, identity.userID)
        if let rules = writeRules.rules(tenantID: tenantID), let held = try? rules.filter.holds(draft.name, field: "name") {
            do {
                return try await pool.withTenantTransaction(tenantID, logger: logger) { connection in
                    try await places.create(
                        tenantID: tenantID, creatorID: userID, creatorName: identity.username, name: draft.name, lat: draft.lat,
                        lng: draft.lng, held: held,
                        on: connection.committing.checked(by: TenantStore.keptRulesCheck(rules, tenantID: tenantID, userID: userID)))
                }
            } catch where TenantStore.rulesChanged(error) {
                writeRules.forget(tenantID: tenantID)
            }
        }
        return try await pool.withTenantTransaction(tenantID, logger: logger) { connection in
            let policy = try await tenants.writePolicy(tenantID: tenantID, userID: userID, on: connection)
            if let rules = policy.rules { writeRules.keep(rules, tenantID: tenantID) }
            return try await places.create(
                tenantID: tenantID, creatorID: userID, creatorName: identity.username, name: draft.name, lat: draft.lat, lng: draft.lng,
                held: try policy.holds(draft.name, field: "name"), on: connection.committing)
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
