import Credentials
import Logging
import Postgres
import ServiceLifecycle

/// What the features share: the pools, the stores, the settings.
struct AppServices: Sendable {
    let configuration: AppConfiguration
    let pool: PostgresPool
    let hashing: HashingPool
    let migrator: PostgresMigrator
    let tenants: TenantStore
    let users = UserStore()
    let sessions: SessionStore
    let throttle: LoginThrottle
    /// Verified against when the user does not exist, so an unknown username
    /// costs the same time as a wrong password and the two cannot be told apart.
    let dummyPasswordHash: String
    /// Fans the database's event notifications out to open `/v1/events` streams.
    let events: EventHub
    /// Each user's, tenant's and client address's share of the pool and of hashing.
    let shares: FairShares

    /// Hashes with the configured cost on the bounded pool, within the request's hashing share
    /// (`429` past it); `503` when the pool stays saturated.
    func hashPassword(_ password: String) async throws -> String {
        try await shares.withHashingShare {
            try await mapBusy { try await hashing.hash(password: password, parameters: configuration.scrypt) }
        }
    }

    /// A stored value that is no hash at all (an account that must not log in, like
    /// the demo author's `!`) matches no password; it is not a server error.
    func verifyPassword(_ password: String, against hash: String) async throws -> Bool {
        do {
            return try await shares.withHashingShare {
                try await mapBusy { try await hashing.verify(password: password, against: hash) }
            }
        } catch is PasswordHashError {
            return false
        }
    }

    private func mapBusy<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch HashingPool.Error.busy {
            throw AppError.unavailable(retryAfter: 1)
        }
    }
}

/// Runs the hashing pool's threads for the life of the application.
struct HashingPoolService: Service {
    let pool: HashingPool

    func run() async throws {
        try? await gracefulShutdown()
        try await pool.shutdown()
    }
}
