import Logging
import Postgres

/// The caller's watches: circles around a point or a place, at most `limit` per user.
struct WatchService: Sendable {
    let pool: PostgresPool
    let watches: WatchStore
    let rules: WatchRules
    /// Watches one user may have (`LR_WATCHES_PER_USER`).
    let limit: Int

    func create(_ draft: WatchDraft, by identity: Identity, logger: Logger) async throws -> Watch {
        try await pool.withTenantTransaction(identity.tenantID, logger: logger) { connection in
            let center: GeoPoint
            var placeID: Int64?
            switch draft.center {
            case .point(let point): center = point
            case .place(let id):
                guard let point = try await watches.placeCenter(tenantID: identity.tenantID, placeID: id, viewerID: identity.userID, on: connection)
                else { throw PushError.unknownPlace }
                (center, placeID) = (point, id)
            }
            guard let watch = try await watches.insert(
                tenantID: identity.tenantID, userID: identity.userID, center: center, radius: draft.radius, placeID: placeID,
                label: draft.label, limit: limit, on: connection)
            else { throw PushError.tooManyWatches(limit: limit) }
            return watch
        }
    }

    func list(for identity: Identity, logger: Logger) async throws -> WatchList {
        try await pool.withTenantReads(identity.tenantID, logger: logger) {
            WatchList(items: try await watches.list(tenantID: identity.tenantID, userID: identity.userID, on: $0))
        }
    }

    func find(_ id: Int64, for identity: Identity, logger: Logger) async throws -> Watch {
        let watch = try await pool.withTenantReads(identity.tenantID, logger: logger) {
            try await watches.find(tenantID: identity.tenantID, userID: identity.userID, id: id, on: $0)
        }
        guard let watch else { throw PushError.watchNotFound }
        return watch
    }

    func update(_ id: Int64, with patch: WatchPatch, by identity: Identity, logger: Logger) async throws -> Watch {
        try await pool.withTenantTransaction(identity.tenantID, logger: logger) { connection in
            if patch.near != nil {
                guard let watch = try await watches.find(tenantID: identity.tenantID, userID: identity.userID, id: id, on: connection) else {
                    throw PushError.watchNotFound
                }
                guard watch.placeID == nil else { throw PushError.placeWatchMoved }
            }
            guard let watch = try await watches.update(tenantID: identity.tenantID, userID: identity.userID, id: id, patch: patch, on: connection)
            else { throw PushError.watchNotFound }
            return watch
        }
    }

    func delete(_ id: Int64, by identity: Identity, logger: Logger) async throws {
        let deleted = try await pool.withTenantTransaction(identity.tenantID, logger: logger) {
            try await watches.delete(tenantID: identity.tenantID, userID: identity.userID, id: id, on: $0)
        }
        guard deleted else { throw PushError.watchNotFound }
    }
}
