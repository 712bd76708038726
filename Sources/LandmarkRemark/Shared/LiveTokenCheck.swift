import Postgres

/// Whether an access token, known by its SHA-256, still admits its holder: not expired, its
/// session not revoked, its user and tenant not disabled. Accounts answers it
/// (`AccessTokenStore`); an open event stream asks it before each batch and at each heartbeat.
protocol LiveTokenCheck: Sendable {
    /// `reads` has `tenantID` set.
    func isLive(tenantID: Int64, accessTokenHash: [UInt8], on reads: some PostgresQuerying) async throws -> Bool
}
