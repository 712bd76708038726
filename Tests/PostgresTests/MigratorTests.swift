import Foundation
import Logging
import Postgres
import Testing

/// Migrations run against a database of their own, created for each test.
@Suite(.timeLimit(.minutes(10))) struct MigratorTests {
    static let logger = Logger(label: "test.migrator")

    static let migrations = [
        PostgresMigrator.Migration(name: "0001_create.sql", sql: """
            CREATE TABLE widgets (id bigint PRIMARY KEY, name text NOT NULL);
            CREATE TABLE applied_log (name text NOT NULL);
            INSERT INTO applied_log VALUES ('0001');
            """),
        PostgresMigrator.Migration(name: "0002_more.sql", sql: """
            ALTER TABLE widgets ADD COLUMN colour text;
            INSERT INTO applied_log VALUES ('0002');
            -- Slow enough that a second migrator surely arrives while this one holds the lock.
            SELECT pg_sleep(0.3);
            """),
    ]

    /// Creates a fresh database, runs `body` with a pool on it, and drops it.
    func withFreshDatabase(_ body: (PostgresPool, String) async throws -> Void) async throws {
        let name = TestDatabase.uniqueName("migrate")
        try await withPool(maxConnections: 1) { admin in
            try await admin.query("CREATE DATABASE \(identifier: name)")
        }
        let url = try TestDatabase.ownerURL().replacingOccurrences(of: "/landmark_remark?", with: "/\(name)?")
        let pool = try PostgresPool(configuration: .init(conninfo: url, maxConnections: 4))
        do {
            try await body(pool, url)
        } catch {
            await pool.close()
            throw error
        }
        await pool.close()
        try await withPool(maxConnections: 1) { admin in
            try await admin.query("DROP DATABASE \(identifier: name) WITH (FORCE)")
        }
    }

    @Test func freshDatabaseMigratesAndASecondRunIsANoOp() async throws {
        try await withFreshDatabase { pool, _ in
            let migrator = PostgresMigrator(migrations: Self.migrations)
            #expect(try await migrator.status(pool: pool) == .pending(["0001_create.sql", "0002_more.sql"]))
            #expect(try await migrator.migrate(pool: pool, logger: Self.logger) == ["0001_create.sql", "0002_more.sql"])
            #expect(try await migrator.status(pool: pool) == .current)
            #expect(try await migrator.migrate(pool: pool, logger: Self.logger) == [])
            let log = try await pool.query("SELECT count(*) FROM applied_log")
            #expect(try log[0].decode(Int.self, column: 0) == 2)
        }
    }

    @Test func twoConcurrentMigratorsApplyEachFileOnce() async throws {
        try await withFreshDatabase { pool, url in
            let other = try PostgresPool(configuration: .init(conninfo: url, maxConnections: 1))
            let migrator = PostgresMigrator(migrations: Self.migrations)
            async let first = migrator.migrate(pool: pool, logger: Self.logger)
            async let second = migrator.migrate(pool: other, logger: Self.logger)
            let applied = try await [first, second]
            await other.close()
            #expect(applied.map(\.count).sorted() == [0, 2])
            let log = try await pool.query("SELECT name FROM applied_log ORDER BY name")
            #expect(try log.map { try $0.decode(String.self, column: 0) } == ["0001", "0002"])
        }
    }

    @Test func anEditedAppliedFileIsRefusedByName() async throws {
        try await withFreshDatabase { pool, _ in
            try await PostgresMigrator(migrations: Self.migrations).migrate(pool: pool, logger: Self.logger)
            var edited = Self.migrations
            edited[0] = .init(name: "0001_create.sql", sql: edited[0].sql + "\n-- a harmless-looking edit\n")
            let migrator = PostgresMigrator(migrations: edited)
            #expect(try await migrator.status(pool: pool) == .changed("0001_create.sql"))
            let error = await #expect(throws: MigrationError.self) { try await migrator.migrate(pool: pool, logger: Self.logger) }
            #expect(error?.migration == "0001_create.sql")
        }
    }

    /// A file corrected after its release, whose earlier text's checksum is named as revised:
    /// a database that applied the earlier text is current, nothing runs again; any other
    /// earlier text is still refused.
    @Test func aRevisedFileAcceptsTheEarlierTextItNames() async throws {
        try await withFreshDatabase { pool, _ in
            try await PostgresMigrator(migrations: Self.migrations).migrate(pool: pool, logger: Self.logger)
            let earlier = try await pool.query("SELECT checksum FROM schema_migrations WHERE name = '0001_create.sql'")
            let checksum = try earlier[0].decode(String.self, column: 0)
            var corrected = Self.migrations
            corrected[0] = .init(name: "0001_create.sql", sql: corrected[0].sql + "\n-- statements reordered\n")
            let migrator = PostgresMigrator(migrations: corrected, revised: ["0001_create.sql": [checksum]])
            #expect(try await migrator.status(pool: pool) == .current)
            #expect(try await migrator.migrate(pool: pool, logger: Self.logger).isEmpty)
            let stranger = PostgresMigrator(migrations: corrected, revised: ["0001_create.sql": [String(repeating: "0", count: 64)]])
            #expect(try await stranger.status(pool: pool) == .changed("0001_create.sql"))
        }
    }

    @Test func aFailingMigrationRollsBackAndNamesItself() async throws {
        try await withFreshDatabase { pool, _ in
            let broken = Self.migrations + [PostgresMigrator.Migration(name: "0003_broken.sql", sql: "CREATE TABLE half (id int); SELEKT;")]
            let error = await #expect(throws: MigrationError.self) {
                try await PostgresMigrator(migrations: broken).migrate(pool: pool, logger: Self.logger)
            }
            #expect(error?.migration == "0003_broken.sql")
            #expect(error.map { String(describing: $0).contains("42601") } == true)
            let half = try await pool.query("SELECT to_regclass('half') IS NULL")
            #expect(try half[0].decode(Bool.self, column: 0) == true)
            #expect(try await PostgresMigrator(migrations: broken).status(pool: pool) == .pending(["0003_broken.sql"]))
        }
    }

    @Test func migrationsAreReadFromADirectoryInNameOrder() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(TestDatabase.uniqueName("migrations"))
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try "SELECT 2;".write(to: directory.appendingPathComponent("0002_b.sql"), atomically: true, encoding: .utf8)
        try "SELECT 1;".write(to: directory.appendingPathComponent("0001_a.sql"), atomically: true, encoding: .utf8)
        try "not sql".write(to: directory.appendingPathComponent("README.md"), atomically: true, encoding: .utf8)
        let migrator = try PostgresMigrator(directory: directory)
        #expect(migrator.migrations.map(\.name) == ["0001_a.sql", "0002_b.sql"])
    }
}
