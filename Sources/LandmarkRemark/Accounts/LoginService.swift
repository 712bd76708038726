import Logging
import Postgres

/// Checks a password under the login throttle: the one way in for login, and the
/// re-authentication `PATCH /v1/me` (password change) and `DELETE /v1/me` ask for.
struct LoginService: Sendable {
    let pool: PostgresPool
    let throttle: LoginThrottle
    let users: UserStore
    let hashing: PasswordHashing

    /// The user `login` (a username or email) names, if `password` is theirs: `tooManyFailures`
    /// while blocked, `invalidCredentials` when wrong (already counted). When right, the
    /// failures are given back and an outdated hash is upgraded.
    func verifiedUser(
        tenantID: Int64, login: String, password: String, address: String, logger: Logger
    ) async throws -> UserRecord {
        let attempt = try await pool.withTenantTransaction(tenantID, logger: logger) { connection in
            try await throttle.reserve(tenantID: tenantID, login: login, address: address, on: connection)
        }
        // Hashing happens outside any transaction: it takes far longer than a query.
        let matches: Bool
        do {
            matches = try await hashing.verify(password, against: attempt.user?.passwordHash ?? hashing.dummyHash)
        } catch {
            // No verdict (hashing saturated, cancelled): nothing was guessed, so nothing counts.
            try? await pool.withTenantTransaction(tenantID, logger: logger) { connection in
                try await throttle.refund(attempt, tenantID: tenantID, on: connection)
            }
            throw error
        }
        // An account without a password was checked against the dummy hash: never a match.
        guard let user = attempt.user, let hash = user.passwordHash, matches else { throw AccountError.invalidCredentials }
        let upgraded = hashing.isOutdated(hash) ? try await hashing.hash(password) : nil
        try await pool.withTenantTransaction(tenantID, logger: logger) { connection in
            try await throttle.succeeded(attempt, userID: user.id, tenantID: tenantID, on: connection)
            if let upgraded {
                try await users.updatePasswordHash(tenantID: tenantID, id: user.id, hash: upgraded, on: connection)
            }
        }
        return user
    }
}
