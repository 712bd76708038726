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

    /// Hashes with the configured cost on the bounded pool; `503` when it stays saturated.
    func hashPassword(_ password: String) async throws -> String {
        try await mapBusy { try await hashing.hash(password: password, parameters: configuration.scrypt) }
    }

    func verifyPassword(_ password: String, against hash: String) async throws -> Bool {
        try await mapBusy { try await hashing.verify(password: password, against: hash) }
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
