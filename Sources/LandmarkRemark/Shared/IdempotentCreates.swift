import Logging
import Postgres

/// The `Idempotency-Key` workflow around a create (a note, a photo): the key claimed in a
/// committed transaction of its own, the work and the stored response in one transaction,
/// the claim released when the work fails. Each create says only what its work is.
struct IdempotentCreates: Sendable {
    let pool: PostgresPool
    let store = IdempotencyStore()

    /// Runs `work` in a transaction of `tenantID`'s; with a `key`, a retry with the same
    /// `fingerprint` gets the first response instead (`replayed`), one with another is
    /// `IdempotencyError.keyReused`.
    ///
    /// `work` gets the connection and where its last statement may run (`last`): with its
    /// `COMMIT` when nothing follows it (no key: one round trip saved), on the connection when
    /// the stored response still follows. (That one commits on its own: it may find its claim
    /// gone, and then the work must roll back.)
    func run(
        key: String?, fingerprint: [UInt8], tenantID: Int64, userID: Int64, logger: Logger,
        _ work: (_ connection: PostgresConnection, _ last: any PostgresQuerying) async throws -> StoredJSONResponse
    ) async throws -> StoredJSONResponse {
        guard let key else {
            return try await pool.withTenantTransaction(tenantID, logger: logger) { try await work($0, $0.committing) }
        }
        switch try await claim(key, fingerprint: fingerprint, tenantID: tenantID, userID: userID, logger: logger) {
        case .replay(let replay):
            return StoredJSONResponse(
                body: Array(replay.body.utf8), status: .init(code: replay.status), location: replay.location, replayed: true)
        case .claimed(let claim):
            do {
                return try await pool.withTenantTransaction(tenantID, logger: logger) { connection in
                    let response = try await work(connection, connection)
                    try await store.complete(
                        claim, status: response.status.code, body: String(decoding: response.body, as: UTF8.self),
                        location: response.location, tenantID: tenantID, userID: userID, on: connection)
                    return response
                }
            } catch {
                // Best effort: a claim left behind counts as abandoned after a minute.
                _ = try? await pool.withTenantTransaction(tenantID, logger: logger) {
                    try await store.release(claim, tenantID: tenantID, userID: userID, on: $0)
                }
                throw error
            }
        }
    }

    /// Claims the key in a committed transaction of its own, so a concurrent duplicate (on
    /// any replica) sees it; a claim that vanished under it (its request failed) is tried again.
    private func claim(
        _ key: String, fingerprint: [UInt8], tenantID: Int64, userID: Int64, logger: Logger
    ) async throws -> IdempotencyStore.Outcome {
        for _ in 0..<3 {
            let outcome = try await pool.withTenantTransaction(tenantID, logger: logger) {
                try await store.claim(key: key, fingerprint: fingerprint, tenantID: tenantID, userID: userID, on: $0)
            }
            if let outcome { return outcome }
        }
        throw IdempotencyError.inProgress
    }
}
