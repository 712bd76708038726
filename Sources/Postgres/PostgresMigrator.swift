import Foundation
import Logging

/// Applies `NNNN_name.sql` files in order, each in its own transaction,
/// recording name and checksum in `schema_migrations`.
///
/// A session-level advisory lock serialises migrators: a second one waits,
/// then finds nothing left to do. A file whose checksum differs from the one
/// recorded when it was applied stops the run: an edited migration means the
/// database and the code disagree, and silently skipping it hides that.
///
/// On a Citus coordinator DDL is propagated to the workers, and Citus records each object
/// it propagates. `nodeLocal` names migrations that must run without that: ones whose
/// `CREATE EXTENSION IF NOT EXISTS` finds extensions the cluster's superuser created on
/// every node, which Citus would record again, and only an extension's owner may. What
/// else such a migration creates reaches the workers with the first object that needs it.
///
/// `revised` names, for a file corrected after its release, the checksums of its earlier
/// texts: a database that applied one of them is current with it. Only for a correction
/// that changes nothing a database which applied the earlier text would need again (the order
/// of two statements, say); anything else is a new migration.
public struct PostgresMigrator: Sendable {
    public struct Migration: Sendable, Equatable {
        public let name: String
        public let sql: String

        public init(name: String, sql: String) {
            self.name = name
            self.sql = sql
        }
    }

    public enum Status: Sendable, Equatable {
        case current
        case pending([String])
        case changed(String)
    }

    /// Arbitrary, fixed key for `pg_advisory_lock`: "LRMIGRAT" in ASCII.
    static let lockKey: Int64 = 0x4C52_4D49_4752_4154

    public let migrations: [Migration]
    public let nodeLocal: Set<String>
    public let revised: [String: Set<String>]

    /// Reads every `*.sql` file of `directory`, ordered by name.
    public init(directory: URL, nodeLocal: Set<String> = [], revised: [String: Set<String>] = [:]) throws {
        self.nodeLocal = nodeLocal
        self.revised = revised
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".sql") }
            .sorted()
        guard !names.isEmpty else {
            throw PostgresError(kind: .invalidConfiguration, message: "no migrations found in \(directory.path)")
        }
        migrations = try names.map { name in
            Migration(name: name, sql: try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8))
        }
    }

    public init(migrations: [Migration], nodeLocal: Set<String> = [], revised: [String: Set<String>] = [:]) {
        self.migrations = migrations
        self.nodeLocal = nodeLocal
        self.revised = revised
    }

    /// Applies what is pending and returns the names applied now.
    @discardableResult
    public func migrate(pool: PostgresPool, logger: Logger) async throws -> [String] {
        try await pool.withConnection { connection in
            try await connection.query("SELECT pg_advisory_lock(\(Self.lockKey))")
            do {
                let applied = try await applyPending(connection, logger: logger)
                try await connection.query("SELECT pg_advisory_unlock(\(Self.lockKey))")
                return applied
            } catch {
                _ = try? await connection.query("SELECT pg_advisory_unlock(\(Self.lockKey))")
                throw error
            }
        }
    }

    /// Compares the files with what the database recorded, without changing anything.
    public func status(pool: PostgresPool) async throws -> Status {
        let exists = try await pool.query("SELECT to_regclass('public.schema_migrations') IS NOT NULL")
        guard try exists[0].decode(Bool.self, column: 0) else {
            return .pending(migrations.map(\.name))
        }
        return try await pool.withConnection { connection in
            try compare(
                recorded: try await recordedChecksums(connection.query("SELECT name, checksum FROM schema_migrations")),
                files: try await fileChecksums(connection))
        }
    }

    private func applyPending(_ connection: PostgresConnection, logger: Logger) async throws -> [String] {
        try await connection.execute(unsafeSQL: """
            CREATE TABLE IF NOT EXISTS schema_migrations (
                name text PRIMARY KEY,
                checksum text NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT now()
            )
            """)
        let recorded = try recordedChecksums(try await connection.query("SELECT name, checksum FROM schema_migrations"))
        let names: [String]
        switch try compare(recorded: recorded, files: try await fileChecksums(connection)) {
        case .current: return []
        case .changed(let name): throw MigrationError(migration: name, underlying: MigrationError.Edited())
        case .pending(let pending): names = pending
        }
        let citus = try await connection.query("SELECT EXISTS (SELECT FROM pg_extension WHERE extname = 'citus')")[0]
            .decode(Bool.self, column: 0)
        for migration in migrations where names.contains(migration.name) {
            logger.info("applying migration", metadata: ["migration": "\(migration.name)"])
            try await connection.execute(unsafeSQL: "BEGIN")
            do {
                if citus && nodeLocal.contains(migration.name) {
                    try await connection.execute(unsafeSQL: "SET LOCAL citus.enable_ddl_propagation = off")
                }
                // On Citus, DDL on the shards one after another: a migration that changes a
                // distributed table and then distributes a new one (admin.distribute_new_table)
                // must not have run a parallel command first, which Citus then refuses.
                if citus { try await connection.execute(unsafeSQL: "SET LOCAL citus.multi_shard_modify_mode = 'sequential'") }
                // Statement by statement (`SQLScript`), in the migration's one transaction.
                for statement in SQLScript.statements(migration.sql) {
                    try await connection.execute(script: statement, at: PostgresCallSite(fileID: #fileID, line: #line))
                }
                try await connection.query("""
                    INSERT INTO schema_migrations (name, checksum)
                    VALUES (\(migration.name), encode(sha256(convert_to(\(migration.sql), 'UTF8')), 'hex'))
                    """)
                try await connection.execute(unsafeSQL: "COMMIT")
            } catch {
                _ = try? await connection.execute(unsafeSQL: "ROLLBACK")
                throw MigrationError(migration: migration.name, underlying: error)
            }
        }
        return names
    }

    private func recordedChecksums(_ rows: PostgresRows) throws -> [String: String] {
        var recorded: [String: String] = [:]
        for row in rows {
            let (name, checksum) = try row.decode((String, String).self)
            recorded[name] = checksum
        }
        return recorded
    }

    /// The files' SHA-256, computed by the server exactly as the INSERT above records it.
    private func fileChecksums(_ connection: PostgresConnection) async throws -> [String] {
        let rows = try await connection.query("""
            SELECT encode(sha256(convert_to(file.sql, 'UTF8')), 'hex')
            FROM unnest(\(migrations.map(\.sql))) WITH ORDINALITY AS file(sql, position)
            ORDER BY file.position
            """)
        return try rows.map { try $0.decode(String.self, column: 0) }
    }

    private func compare(recorded: [String: String], files: [String]) throws -> Status {
        var pending: [String] = []
        for (migration, checksum) in zip(migrations, files) {
            guard let recordedChecksum = recorded[migration.name] else {
                pending.append(migration.name)
                continue
            }
            if recordedChecksum != checksum, !(revised[migration.name]?.contains(recordedChecksum) ?? false) {
                return .changed(migration.name)
            }
        }
        return pending.isEmpty ? .current : .pending(pending)
    }
}

/// A migration failed to apply, or an applied one was edited.
public struct MigrationError: Error, CustomStringConvertible {
    public let migration: String
    public let underlying: Error

    /// The file changed after it was applied.
    public struct Edited: Error, CustomStringConvertible {
        public var description: String {
            "the file was edited after it was applied; restore it and add a new migration instead"
        }
    }

    public var description: String {
        if let error = underlying as? PostgresError, error.kind == .server {
            return "migration \(migration) failed: SQLSTATE \(error.sqlState ?? "?"): \(error.message)"
        }
        return "migration \(migration) failed: \(underlying)"
    }
}
