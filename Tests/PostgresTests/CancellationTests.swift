import Foundation
import Postgres
import Testing

/// Cancelling a statement's task cancels the statement on the server, and the connection
/// it ran on is drained and reused; `statement_timeout` bounds every statement of a pool.
@Suite(.timeLimit(.minutes(1))) struct CancellationTests {
    /// The backend of a statement, seen from another session: its pid and state.
    private static func activity(_ observer: PostgresPool, tag: String) async throws -> (pid: Int, state: String)? {
        let rows = try await observer.query("""
            SELECT pid::int8, state FROM pg_stat_activity
            WHERE query LIKE \("SELECT pg_sleep(10) AS \"" + tag + "\"%") AND pid <> pg_backend_pid()
            """)
        guard let row = rows.first else { return nil }
        let (pid, state) = try row.decode((Int, String).self)
        return (pid, state)
    }

    private static func state(_ observer: PostgresPool, pid: Int) async throws -> String? {
        try await observer.query("SELECT state FROM pg_stat_activity WHERE pid = \(pid)").first?.decode(String.self, column: 0)
    }

    /// A ten-second statement whose task is cancelled ends within a second with the server's
    /// cancellation (57014), its backend is idle again, and the same connection (one in the
    /// pool) then answers `SELECT 1`.
    @Test func cancellingTheTaskCancelsTheStatementOnTheServer() async throws {
        let tag = TestDatabase.uniqueName("cancel")
        try await withPool(maxConnections: 1) { observer in
            try await withPool(maxConnections: 1) { pool in
                let pid = try await pool.scalar("SELECT pg_backend_pid()::int8", as: Int.self)
                let statement = Task { try await pool.query("SELECT pg_sleep(10) AS \(identifier: tag)") }
                while try await Self.activity(observer, tag: tag)?.state != "active" {
                    try await Task.sleep(for: .milliseconds(10))
                }
                let cancelled = ContinuousClock.now
                statement.cancel()
                let outcome = await statement.result
                #expect(ContinuousClock.now - cancelled < .seconds(1))
                #expect(throws: PostgresError.self) { try outcome.get() }
                if case .failure(let error as PostgresError) = outcome { #expect(error.isCancellation) }

                let backend = try #require(try await Self.activity(observer, tag: tag))
                #expect(backend.pid == pid)
                #expect(backend.state == "idle")
                #expect(pool.statistics.open == 1 && pool.statistics.inUse == 0 && pool.statistics.idle == 1)
                #expect(try await pool.scalar("SELECT 1::int8", as: Int.self) == 1)
                #expect(try await pool.scalar("SELECT pg_backend_pid()::int8", as: Int.self) == pid)
            }
        }
    }

    /// Cancelled inside a transaction, the statement ends the same way, the transaction is
    /// rolled back, and the connection comes back idle.
    @Test func cancellingInsideATransactionRollsItBack() async throws {
        let tag = TestDatabase.uniqueName("cancel_tx")
        try await withPool(maxConnections: 1) { observer in
            try await withPool(maxConnections: 1) { pool in
                let statement = Task {
                    try await pool.withTransaction { try await $0.query("SELECT pg_sleep(10) AS \(identifier: tag)") }
                }
                var backend = try await Self.activity(observer, tag: tag)
                while backend?.state != "active" {
                    try await Task.sleep(for: .milliseconds(10))
                    backend = try await Self.activity(observer, tag: tag)
                }
                let cancelled = ContinuousClock.now
                statement.cancel()
                _ = await statement.result
                #expect(ContinuousClock.now - cancelled < .seconds(1))
                #expect(try await Self.state(observer, pid: try #require(backend).pid) == "idle")
                #expect(pool.statistics.inUse == 0)
                #expect(try await pool.scalar("SELECT 1::int8", as: Int.self) == 1)
            }
        }
    }

    /// The pool's statement timeout ends a long statement, alone, in a transaction, or with
    /// settings of its own, and the connection stays usable.
    @Test func statementTimeoutBoundsEveryStatement() async throws {
        try await withPool(maxConnections: 1, statementTimeout: .milliseconds(200)) { pool in
            let started = ContinuousClock.now
            await #expect(throws: PostgresError.self) { try await pool.query("SELECT pg_sleep(5)") }
            await #expect(throws: PostgresError.self) {
                try await pool.withTransaction { try await $0.query("SELECT pg_sleep(5)") }
            }
            await #expect(throws: PostgresError.self) {
                try await pool.query("SELECT pg_sleep(5)", settings: [("application_name", "timeout-test")])
            }
            #expect(ContinuousClock.now - started < .seconds(3))
            #expect(try await pool.scalar("SHOW statement_timeout", as: String.self) == "200ms")
            #expect(pool.statistics.open == 1 && pool.statistics.inUse == 0 && pool.statistics.idle == 1)
            do {
                try await pool.query("SELECT pg_sleep(5)")
            } catch let error as PostgresError {
                #expect(error.isCancellation)
            }
        }
    }
}
