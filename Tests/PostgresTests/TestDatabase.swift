import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Postgres
import Testing

/// The throwaway cluster `scripts/test.sh` starts. Tests never skip: without it they fail loudly.
enum TestDatabase {
    static func environment(_ name: String) throws -> String {
        guard let value = ProcessInfo.processInfo.environment[name], !value.isEmpty else {
            throw MissingDatabase(variable: name)
        }
        return value
    }

    /// The owner role: it may create tables, which these tests do.
    static func ownerURL() throws -> String { try environment("LR_TEST_MIGRATE_DATABASE_URL") }

    /// `acquireTimeout` is generous unless a test is about it: beside the whole suite on a
    /// loaded 2-core machine a pool's connections may stay lent out for seconds.
    static func pool(
        maxConnections: Int = 4, acquireTimeout: Duration = .seconds(60), statementTimeout: Duration? = nil
    ) throws -> PostgresPool {
        try PostgresPool(configuration: .init(
            conninfo: try ownerURL(), maxConnections: maxConnections, acquireTimeout: acquireTimeout,
            statementTimeout: statementTimeout))
    }

    /// A table name no other test uses.
    static func uniqueName(_ prefix: String) -> String {
        "\(prefix)_\(UInt32.random(in: 0...UInt32.max))"
    }

    struct MissingDatabase: Error, CustomStringConvertible {
        let variable: String
        var description: String {
            "\(variable) is not set: run the tests with `make test`, which starts a PostgreSQL cluster for them"
        }
    }
}

/// Runs `body` with a pool and closes it afterwards, whatever happens.
@discardableResult
func withPool<T: Sendable>(
    maxConnections: Int = 4, acquireTimeout: Duration = .seconds(60), statementTimeout: Duration? = nil,
    _ body: (PostgresPool) async throws -> T
) async throws -> T {
    let pool = try TestDatabase.pool(
        maxConnections: maxConnections, acquireTimeout: acquireTimeout, statementTimeout: statementTimeout)
    do {
        let result = try await body(pool)
        await pool.close()
        return result
    } catch {
        await pool.close()
        throw error
    }
}

extension PostgresPool {
    /// The first column of the first row.
    func scalar<T: PostgresDecodable>(_ query: PostgresQuery, as type: T.Type) async throws -> T {
        try await self.query(query)[0].decode(T.self, column: 0)
    }
}

/// Runs a shell command on a thread of its own and returns its exit status.
/// (Foundation's `Process.waitUntilExit` spins a run loop, which hangs when
/// called from a Swift concurrency thread on Linux.)
func runShell(_ command: String) async -> Int32 {
    await withCheckedContinuation { continuation in
        Thread.detachNewThread {
            let status = system(command)
            continuation.resume(returning: status == -1 ? -1 : (status >> 8) & 0xff)
        }
    }
}
