import Postgres

/// Slows down password guessing, per username and per client address.
///
/// Counts live in PostgreSQL so every replica sees them. Past the threshold a
/// key is blocked for 15 s, doubling with every further failure up to 15 min.
/// A success clears the username's count but not the address's, so one valid
/// account cannot be used to launder an address's guesses at others.
struct LoginThrottle: Sendable {
    let failuresPerUser: Int
    let failuresPerAddress: Int
    /// Failures older than this start a fresh count.
    static let windowSeconds = 15 * 60

    static func userKey(_ login: String) -> String { "user:" + login.lowercased() }
    static func addressKey(_ address: String) -> String { "addr:" + address }

    /// Throws `429 rate_limited` while either key is blocked.
    func check(tenantID: Int64, login: String, address: String, on connection: PostgresConnection) async throws {
        let rows = try await connection.query("""
            SELECT ceil(extract(epoch FROM max(blocked_until) - now()))::int8
            FROM login_failures
            WHERE tenant_id = \(tenantID) AND key = ANY(\([Self.userKey(login), Self.addressKey(address)]))
              AND blocked_until > now()
            """)
        if let seconds = try rows.first?.decode(Int?.self, column: 0) {
            throw AppError.rateLimited(retryAfter: max(1, seconds))
        }
    }

    /// Counts a failure against both keys and blocks those past their threshold.
    func recordFailure(tenantID: Int64, login: String, address: String, on connection: PostgresConnection) async throws {
        for (key, threshold) in [(Self.userKey(login), failuresPerUser), (Self.addressKey(address), failuresPerAddress)] {
            try await connection.query("""
                INSERT INTO login_failures AS f (tenant_id, key, failures, first_failure_at)
                VALUES (\(tenantID), \(key), 1, now())
                ON CONFLICT (tenant_id, key) DO UPDATE SET
                    failures = CASE WHEN f.first_failure_at < now() - make_interval(secs => \(Self.windowSeconds))
                                    THEN 1 ELSE f.failures + 1 END,
                    first_failure_at = CASE WHEN f.first_failure_at < now() - make_interval(secs => \(Self.windowSeconds))
                                            THEN now() ELSE f.first_failure_at END
                """)
            try await connection.query("""
                UPDATE login_failures SET blocked_until = now() + make_interval(
                    secs => least(900, 15 * power(2, least(failures - \(threshold), 10))))
                WHERE tenant_id = \(tenantID) AND key = \(key) AND failures >= \(threshold)
                """)
        }
    }

    func recordSuccess(tenantID: Int64, login: String, on connection: PostgresConnection) async throws {
        try await connection.query("DELETE FROM login_failures WHERE tenant_id = \(tenantID) AND key = \(Self.userKey(login))")
    }
}
