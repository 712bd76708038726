import Foundation
import Postgres
import TestPolling
import Testing

/// Statements run in libpq's non-blocking mode: the task suspends while the server works,
/// and one thread waits on every socket (`SocketReadiness`).
@Suite(.timeLimit(.minutes(10))) struct NonBlockingTests {
    /// More statements wait on the server than Swift's cooperative pool has threads, and the
    /// task that lets them go still runs. Were a waiting statement to hold its thread, that
    /// task could not run and the test would hang until its time limit.
    @Test func waitingStatementsHoldNoThread() async throws {
        let waiting = ProcessInfo.processInfo.activeProcessorCount + 4
        let key = Int64.random(in: 1...Int64.max)
        try await withPool(maxConnections: 2) { controller in
            try await controller.withConnection { holder in
                try await holder.query("SELECT pg_advisory_lock(\(key))")
                try await withPool(maxConnections: waiting, acquireTimeout: .seconds(30)) { pool in
                    try await withThrowingTaskGroup(of: Int.self) { group in
                        for index in 0..<waiting {
                            group.addTask {
                                let rows = try await pool.query("SELECT \(index)::int8 FROM pg_advisory_xact_lock_shared(\(key))")
                                return try rows[0].decode(Int.self, column: 0)
                            }
                        }
                        // Every one of them is inside the server, waiting for the lock.
                        try #require(
                            try await eventually {
                                try await controller.scalar(
                                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objid = (\(key) & 4294967295)::oid",
                                    as: Int.self) >= waiting
                            })
                        try await holder.query("SELECT pg_advisory_unlock(\(key))")
                        let done = try await group.reduce(into: [Int]()) { $0.append($1) }
                        #expect(done.sorted() == Array(0..<waiting))
                    }
                }
            }
        }
    }

    /// A value and a result far larger than a socket's buffer (a Unix socket's is about 200 kB
    /// here, `net.core.wmem_default`): libpq sends and reads them in pieces, waiting for the
    /// socket between them. About 2 MB each way: eight times that took over the suite's
    /// minute in a debug build beside a whole Citus run on two cores.
    @Test func valuesLargerThanTheSocketBufferGoBothWays() async throws {
        let unit = "Landmark Remark, ünïcödé ✓ "
        let large = String(repeating: unit, count: 60_000)
        try await withPool { pool in
            let rows = try await pool.query("SELECT \(large)::text, length(\(large)::text)::int8")
            // Bytes and arithmetic, not `==` and `count` on millions of characters: in a debug
            // build those took tens of seconds on a busy machine, past the time limit.
            #expect(try rows[0].decode(String.self, column: 0).utf8.elementsEqual(large.utf8))
            #expect(try rows[0].decode(Int.self, column: 1) == unit.unicodeScalars.count * 60_000)
            let generated = try await pool.scalar("SELECT repeat('x', 2000000)", as: String.self)
            #expect(generated.utf8.count == 2_000_000)
        }
    }

    /// Closing the pool fails a statement still waiting for the server, rather than leaving
    /// its task suspended for good; the connection is not reused.
    @Test func closingThePoolFailsAStatementStillWaiting() async throws {
        try await withPool(maxConnections: 1) { observer in
            let pool = try TestDatabase.pool(maxConnections: 1)
            let statement = Task { try await pool.query("SELECT pg_sleep(20)") }
            try #require(
                try await eventually {
                    try await observer.scalar(
                        "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep(20)%' AND state = 'active'",
                        as: Int.self) > 0
                })
            await pool.close()
            let error = await #expect(throws: PostgresError.self) { try await statement.value }
            #expect(error?.kind == .poolClosed)
            // The abandoned backend would sleep on; end it.
            try await observer.query(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep(20)%'")
        }
    }
}
