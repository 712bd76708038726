import Foundation
import Postgres
import TestPolling
import Testing

/// Cancelling a statement's task cancels the statement on the server, and the connection
/// it ran on is drained and reused; `statement_timeout` bounds every statement of a pool.
///
/// Whether the server cancelled a statement is read from what it answered (57014) and from
/// the statement ending long before it could have run to its end (a sleep of minutes), not
/// from how fast the machine is: a loaded 2-core machine once took 3.3 s for three 200 ms
/// timeouts.
@Suite(.timeLimit(.minutes(10))) struct CancellationTests {
    /// Long enough that a statement still running it was not cancelled; past the suite's limit.
    static let sleepSeconds = 300
    /// "Long before the sleep's end": time enough for any load, far from `sleepSeconds`.
    static let longBefore = Duration.seconds(60)

    /// The backend of a statement, seen from another session: its pid and state.
    private static func activity(_ observer: PostgresPool, tag: String) async throws -> (pid: Int, state: String)? {
        let rows = try await observer.query("""
            SELECT pid::int8, state FROM pg_stat_activity
            WHERE query LIKE \("SELECT pg_sleep(\(sleepSeconds)) AS \"" + tag + "\"%") AND pid <> pg_backend_pid()
            """)
        guard let row = rows.first else { return nil }
        let (pid, state) = try row.decode((Int, String).self)
        return (pid, state)
    }

    private static func state(_ observer: PostgresPool, pid: Int) async throws -> String? {
        try await observer.query("SELECT state FROM pg_stat_activity WHERE pid = \(pid)").first?.decode(String.self, column: 0)
    }

    /// A statement of minutes whose task is cancelled ends at once with the server's
    /// cancellation (57014), its backend is idle again, and the same connection (one in the
    /// pool) then answers `SELECT 1`.
    @Test func cancellingTheTaskCancelsTheStatementOnTheServer() async throws {
        let tag = TestDatabase.uniqueName("cancel")
        try await withPool(maxConnections: 1) { observer in
            try await withPool(maxConnections: 1) { pool in
                let pid = try await pool.scalar("SELECT pg_backend_pid()::int8", as: Int.self)
                let statement = Task { try await pool.query("SELECT pg_sleep(\(literal: Self.sleepSeconds)) AS \(identifier: tag)") }
                try #require(try await eventually { try await Self.activity(observer, tag: tag)?.state == "active" })
                let cancelled = ContinuousClock.now
                statement.cancel()
                let outcome = await statement.result
                #expect(ContinuousClock.now - cancelled < Self.longBefore)
                #expect(throws: PostgresError.self) { try outcome.get() }
                if case .failure(let error as PostgresError) = outcome { #expect(error.isCancellation, "\(error)") }

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
                    try await pool.withTransaction { try await $0.query("SELECT pg_sleep(\(literal: Self.sleepSeconds)) AS \(identifier: tag)") }
                }
                var backend = try await Self.activity(observer, tag: tag)
                try #require(
                    try await eventually {
                        backend = try await Self.activity(observer, tag: tag)
                        return backend?.state == "active"
                    })
                let cancelled = ContinuousClock.now
                statement.cancel()
                let outcome = await statement.result
                #expect(ContinuousClock.now - cancelled < Self.longBefore)
                #expect(throws: PostgresError.self) { try outcome.get() }
                if case .failure(let error as PostgresError) = outcome { #expect(error.isCancellation, "\(error)") }
                #expect(try await Self.state(observer, pid: try #require(backend).pid) == "idle")
                #expect(pool.statistics.inUse == 0)
                #expect(try await pool.scalar("SELECT 1::int8", as: Int.self) == 1)
            }
        }
    }

    /// The pool's statement timeout ends a long statement, alone, in a transaction, or with
    /// settings of its own, and the connection stays usable. Each ends with the server's
    /// cancellation (57014) long before its sleep could have: the timeout, not the sleep, ended it.
    @Test func statementTimeoutBoundsEveryStatement() async throws {
        try await withPool(maxConnections: 1, statementTimeout: .milliseconds(200)) { pool in
            let sleep: PostgresQuery = "SELECT pg_sleep(\(literal: Self.sleepSeconds))"
            let ways: [(String, () async throws -> Void)] = [
                ("alone", { _ = try await pool.query(sleep) }),
                ("in a transaction", { _ = try await pool.withTransaction { try await $0.query(sleep) } }),
                ("with settings", { _ = try await pool.query(sleep, settings: [("application_name", "timeout-test")]) }),
            ]
            for (way, run) in ways {
                let started = ContinuousClock.now
                do {
                    try await run()
                    Issue.record("\(way): the statement ran to its end")
                } catch let error as PostgresError {
                    #expect(error.isCancellation, "\(way): \(error)")
                }
                #expect(ContinuousClock.now - started < Self.longBefore, "\(way)")
            }
            #expect(try await pool.scalar("SHOW statement_timeout", as: String.self) == "200ms")
            #expect(pool.statistics.open == 1 && pool.statistics.inUse == 0 && pool.statistics.idle == 1)
        }
    }
}
