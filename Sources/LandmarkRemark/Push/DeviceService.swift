import Logging
import Postgres

/// The caller's devices: registered for their session, at most `limit` per user.
struct DeviceService: Sendable {
    let pool: PostgresPool
    let devices: DeviceStore
    /// Devices one user may have (`LR_DEVICES_PER_USER`).
    let limit: Int

    func register(_ token: String, _ registration: DeviceRegistration, by identity: Identity, logger: Logger) async throws {
        try await pool.withTenantTransaction(identity.tenantID, logger: logger) { connection in
            try await devices.register(
                tenantID: identity.tenantID, userID: identity.userID, sessionID: identity.sessionID, token: token,
                registration: registration, limit: limit, on: connection)
        }
    }

    func unregister(_ token: String, by identity: Identity, logger: Logger) async throws {
        try await pool.withTenantTransaction(identity.tenantID, logger: logger) { connection in
            try await devices.unregister(tenantID: identity.tenantID, userID: identity.userID, token: token, on: connection)
        }
    }
}
