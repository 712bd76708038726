import Postgres

/// The devices table (migration 0048): where each user's pushes go, bound to the session
/// that registered each.
struct DeviceStore: Sendable {
    /// Registers `token` for the user's session (moving it from whoever had it), then drops
    /// the user's devices registered longest ago beyond `limit`. The user's row is locked
    /// first, so two registrations at once are counted one after the other.
    func register(
        tenantID: Int64, userID: Int64, sessionID: Int64, token: String, registration: DeviceRegistration, limit: Int,
        on connection: PostgresConnection
    ) async throws {
        try await connection.query("SELECT 1 FROM users WHERE tenant_id = \(tenantID) AND id = \(userID) FOR NO KEY UPDATE")
        try await connection.query("""
            INSERT INTO devices AS d (tenant_id, token, user_id, session_id, platform, environment, app_id, created_at, updated_at)
            VALUES (\(tenantID), \(token), \(userID), \(sessionID), 'apns', \(registration.environment.rawValue), \(registration.appID), now(), now())
            ON CONFLICT (tenant_id, token) DO UPDATE SET
                user_id = excluded.user_id, session_id = excluded.session_id, environment = excluded.environment,
                app_id = excluded.app_id, updated_at = excluded.updated_at,
                created_at = CASE WHEN d.user_id = excluded.user_id THEN d.created_at ELSE excluded.created_at END
            """)
        try await connection.query("""
            DELETE FROM devices WHERE tenant_id = \(tenantID) AND token IN (
                SELECT token FROM devices WHERE tenant_id = \(tenantID) AND user_id = \(userID)
                ORDER BY updated_at DESC, token DESC OFFSET \(limit))
            """)
    }

    /// Removes `token` if it is the user's.
    func unregister(tenantID: Int64, userID: Int64, token: String, on connection: PostgresConnection) async throws {
        try await connection.query("DELETE FROM devices WHERE tenant_id = \(tenantID) AND token = \(token) AND user_id = \(userID)")
    }
}
