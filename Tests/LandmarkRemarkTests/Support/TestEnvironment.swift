import Foundation
import Hummingbird
import HummingbirdTesting
import LandmarkRemark
import Logging
import Postgres
import Testing

/// The database `scripts/test.sh` starts, migrated once per test process.
/// Tests never skip: without the database they fail, saying how to run them.
enum TestEnvironment {
    static func variable(_ name: String) throws -> String {
        guard let value = ProcessInfo.processInfo.environment[name], !value.isEmpty else {
            throw Missing(variable: name)
        }
        return value
    }

    struct Missing: Error, CustomStringConvertible {
        let variable: String
        var description: String { "\(variable) is not set: run the tests with `make test`, which starts PostgreSQL for them" }
    }

    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static let testSigningKey = AccessTokenKey(id: 1, secret: Array(repeating: 7, count: 32))

    /// Settings for tests: the real database, cheap scrypt so the suite stays fast.
    static func configuration(_ adjust: (inout AppConfiguration) -> Void = { _ in }) throws -> AppConfiguration {
        var configuration = AppConfiguration()
        configuration.database.url = try variable("LR_TEST_DATABASE_URL")
        configuration.database.migrateURL = try variable("LR_TEST_MIGRATE_DATABASE_URL")
        configuration.database.migrationsDirectory = repositoryRoot.appendingPathComponent("sql/migrations").path
        configuration.accounts.scrypt = .init(logN: 4, r: 8, p: 1)
        configuration.database.poolSize = 4
        configuration.server.port = 0
        // Suites run at once on a small machine, and NotesPlanTests locks notes while it seeds
        // 100,000 of them: generous bounds keep unrelated suites from timing out behind it.
        // The suites about the bounds (BoundedWorkTests) set their own, short ones.
        configuration.database.statementTimeout = .seconds(60)
        configuration.server.requestTimeout = .seconds(120)
        configuration.shares.queueTimeout = .seconds(60)
        // Waits for a connection or a hashing slot too: a loaded 2-core machine running every
        // suite at once keeps them busy for seconds, and a 503 there is no test's subject.
        configuration.database.acquireTimeout = .seconds(60)
        configuration.accounts.hashQueueTimeout = .seconds(60)
        // And a new stream's wait for its tenant's head: each test starts a service, whose
        // first head waits for every transaction open at its start (another suite's seed of
        // 100,000 notes, say), which on a loaded machine outlasted the 5 s of production.
        configuration.events.readyTimeout = .seconds(90)
        // And a stream ticket's life: a test that makes twenty of them and counts the ones
        // waiting took 72 s on a loaded machine, longer than production's 30 s, so the first
        // had expired. The test about expiry sets its own, short one.
        configuration.events.ticketLifetime = 300
        // No mail sender polling the shared database beside every suite: the mail suites
        // (MailTestRig) turn it on, or drive one of their own.
        configuration.mail.senderEnabled = false
        // Nor a push sender: the push suites drive their own, against their fake APNs.
        configuration.push.senderEnabled = false
        // One signing key for every service a test starts, as replicas share
        // LR_ACCESS_TOKEN_KEYS: a token one signed, another verifies.
        configuration.accounts.accessTokenKeys = [testSigningKey]
        adjust(&configuration)
        return configuration
    }

    static let logger: Logger = {
        var logger = Logger(label: "test")
        logger.logLevel = ProcessInfo.processInfo.environment["LR_TEST_LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0) } ?? .critical
        return logger
    }()

    /// The cluster's transactions that hold an xid (and so hold the event log's horizon back),
    /// oldest first, for a failure's message: what another suite had open.
    static func longTransactions() async throws -> String {
        try await ownerScalar("""
            SELECT coalesce(string_agg(format('%s (%s, %s s, %s)', pid, state, round(extract(epoch FROM now() - xact_start)),
                                              left(query, 80)), '; ' ORDER BY xact_start), 'none')
            FROM pg_stat_activity WHERE backend_xid IS NOT NULL AND pid <> pg_backend_pid()
            """, as: String.self)
    }

    /// Migrates once; the migrator's advisory lock makes concurrent first calls safe anyway.
    static func migrate() async throws {
        try await migrated.value
    }

    private static let migrated = Task {
        _ = try await AdminCommands.migrate(configuration: try configuration(), logger: logger)
    }

    @discardableResult
    /// Runs `body` with a pool on the owner role, for arranging data and checking it behind the API's back.
    static func withOwnerPool<T: Sendable>(_ body: (PostgresPool) async throws -> T) async throws -> T {
        try await withPool(url: "LR_TEST_MIGRATE_DATABASE_URL", maxConnections: 2, body)
    }

    /// Runs `body` with a pool on the service's role, to do what the service does outside a request.
    @discardableResult
    static func withAppPool<T: Sendable>(_ body: (PostgresPool) async throws -> T) async throws -> T {
        try await withPool(url: "LR_TEST_DATABASE_URL", maxConnections: 1, body)
    }

    private static func withPool<T: Sendable>(
        url: String, maxConnections: Int, _ body: (PostgresPool) async throws -> T
    ) async throws -> T {
        let pool = try PostgresPool(configuration: .init(conninfo: try variable(url), maxConnections: maxConnections))
        do {
            let result = try await body(pool)
            await pool.close()
            return result
        } catch {
            await pool.close()
            throw error
        }
    }

    /// Creates a tenant with a unique slug and returns the slug.
    static func makeTenant(minPasswordLength: Int = 8) async throws -> String {
        try await migrate()
        let slug = "t-\(UInt64.random(in: 0...UInt64.max) % 1_000_000_000_000)"
        try await withOwnerPool { pool in
            try await pool.query("SELECT slug FROM admin.create_tenant(\(slug), \("Test tenant"))")
            if minPasswordLength != 8 {
                try await pool.query("SELECT slug FROM admin.set_tenant_setting(\(slug), 'min_password_length', \(String(minPasswordLength)))")
            }
        }
        return slug
    }

    /// Runs `attempt` with a new tenant until a run starts and ends in one hour of the
    /// database's clock, and returns that run's tenant and result; at most twice, since a run
    /// takes seconds and the hour turns once an hour. For limits counted in the clock's hours
    /// (guest sign-ups per address): a run across the turn counts in two windows, and the
    /// limit it tests would seem not to hold. `attempt` returns what to check, not checks it.
    static func inOneClockHour<T>(_ attempt: (String) async throws -> T) async throws -> (tenant: String, result: T) {
        let hour: PostgresQuery = "SELECT extract(epoch FROM date_trunc('hour', now()))::int8"
        for _ in 0..<2 {
            let tenant = try await makeTenant()
            let started = try await ownerScalar(hour, as: Int.self)
            let result = try await attempt(tenant)
            if try await ownerScalar(hour, as: Int.self) == started { return (tenant, result) }
        }
        throw CrossedTheHour()
    }

    struct CrossedTheHour: Error, CustomStringConvertible {
        var description: String { "two runs in a row crossed the turn of an hour" }
    }

    /// The first column of the first row, queried as the owner (past row-level security).
    static func ownerScalar<T: PostgresDecodable & Sendable>(_ query: PostgresQuery, as type: T.Type) async throws -> T {
        try await withOwnerPool { try await $0.query(query)[0].decode(T.self, column: 0) }
    }
}

/// Builds the real application and runs `body` against its router.
func withApp(
    _ adjust: (inout AppConfiguration) -> Void = { _ in },
    _ body: @Sendable (any TestClientProtocol) async throws -> Void
) async throws {
    try await TestEnvironment.migrate()
    let app = try await buildApplication(configuration: try TestEnvironment.configuration(adjust), logger: TestEnvironment.logger)
    try await app.test(.router, body)
}
