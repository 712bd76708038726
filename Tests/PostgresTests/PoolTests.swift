import Foundation
import Postgres
import Synchronization
import TestPolling
import Testing

@Suite(.timeLimit(.minutes(10))) struct PoolTests {
    @Test func twoHundredConcurrentQueriesThroughFourConnections() async throws {
        try await withPool(maxConnections: 4, acquireTimeout: .seconds(30)) { pool in
            let results = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<200 {
                    group.addTask {
                        let rows = try await pool.query("SELECT \(index)::int8 FROM pg_sleep(0.002)")
                        return try rows[0].decode(Int.self, column: 0)
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(results.sorted() == Array(0..<200))
            let statistics = pool.statistics
            #expect(statistics.open <= 4)
            #expect(statistics.inUse == 0)
            #expect(statistics.waiting == 0)
        }
    }

    @Test func acquireTimesOutWhileEveryConnectionIsHeld() async throws {
        try await withPool(maxConnections: 1, acquireTimeout: .milliseconds(200)) { pool in
            let holding = AsyncStream.makeStream(of: Void.self)
            let release = AsyncStream.makeStream(of: Void.self)
            let holder = Task {
                try await pool.withConnection { _ in
                    holding.continuation.yield()
                    for await _ in release.stream { break }
                }
            }
            for await _ in holding.stream { break }
            let started = ContinuousClock.now
            let error = await #expect(throws: PostgresError.self) { try await pool.query("SELECT 1") }
            #expect(error?.kind == .poolTimeout)
            #expect(error?.isUnavailable == true)
            #expect(ContinuousClock.now - started >= .milliseconds(190))
            release.continuation.yield()
            try await holder.value
            // Once released, the connection serves again.
            #expect(try await pool.scalar("SELECT 1::int8", as: Int.self) == 1)
        }
    }

    @Test func cancelledWaiterLeavesTheQueue() async throws {
        try await withPool(maxConnections: 1, acquireTimeout: .seconds(30)) { pool in
            let holding = AsyncStream.makeStream(of: Void.self)
            let release = AsyncStream.makeStream(of: Void.self)
            let holder = Task {
                try await pool.withConnection { _ in
                    holding.continuation.yield()
                    for await _ in release.stream { break }
                }
            }
            for await _ in holding.stream { break }
            let waiter = Task { try await pool.query("SELECT 1") }
            try #require(try await eventually { pool.statistics.waiting > 0 })
            waiter.cancel()
            await #expect(throws: CancellationError.self) { try await waiter.value }
            #expect(pool.statistics.waiting == 0)
            release.continuation.yield()
            try await holder.value
        }
    }

    @Test func connectionsTerminatedByTheServerAreReplaced() async throws {
        try await withPool(maxConnections: 2) { pool in
            let pids = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<2 {
                    group.addTask { try await pool.scalar("SELECT pg_backend_pid()::int8 FROM pg_sleep(0.05)", as: Int.self) }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            // Kill both idle backends from a separate connection, and wait until they are gone
            // (not a fixed pause: a loaded machine may take long to end a backend).
            try await withPool(maxConnections: 1) { killer in
                try await killer.query("SELECT pg_terminate_backend(pid::int4) FROM unnest(\(pids)::int8[]) AS pid")
                let gone = try await eventually {
                    try await killer.scalar("SELECT count(*)::int8 FROM pg_stat_activity WHERE pid = ANY(\(pids)::int8[])", as: Int.self) == 0
                }
                try #require(gone, "the killed backends still run")
            }
            for _ in 0..<4 {
                #expect(try await pool.scalar("SELECT 1::int8", as: Int.self) == 1)
            }
        }
    }

    @Test func serverRestartIsSurvivedWithoutRestartingThePool() async throws {
        // A cluster of its own, so restarting it does not disturb the tests running beside this one.
        let command = try TestDatabase.environment("LR_TEST_POSTGRES_RESTART")
        let pool = try PostgresPool(configuration: .init(
            conninfo: try TestDatabase.environment("LR_TEST_RESTART_DATABASE_URL"), maxConnections: 2))
        do {
            let before = try await pool.scalar("SELECT 1::int8", as: Int.self)
            #expect(before == 1)
            let status = await runShell(command)
            #expect(status == 0)
            let after = try await pool.scalar("SELECT 2::int8", as: Int.self)
            #expect(after == 2)
        } catch {
            await pool.close()
            throw error
        }
        await pool.close()
    }

    /// `plansPreparedOnce`: every statement's transaction (a lone statement's, a deferred
    /// `BEGIN`'s, pipelined reads') plans prepared statements once; off, PostgreSQL chooses. On
    /// a database with Citus (`make test-citus`) PostgreSQL chooses either way.
    @Test func preparedStatementsArePlannedOnceWhenThePoolSaysSo() async throws {
        for plansOnce in [true, false] {
            let pool = try PostgresPool(configuration: .init(
                conninfo: try TestDatabase.ownerURL(), maxConnections: 1, statementTimeout: .seconds(30), plansPreparedOnce: plansOnce))
            do {
                let citus = try await pool.scalar("SELECT count(*) FROM pg_extension WHERE extname = 'citus'", as: Int.self) > 0
                let expected = plansOnce && !citus ? "force_generic_plan" : "auto"
                #expect(try await pool.scalar("SELECT current_setting('plan_cache_mode')", as: String.self) == expected)
                let inTransaction = try await pool.withTransaction { connection in
                    try await connection.query("SELECT current_setting('plan_cache_mode')")[0].decode(String.self, column: 0)
                }
                #expect(inTransaction == expected)
                let withSettings = try await pool.query("SELECT current_setting('plan_cache_mode')", settings: [("app.probe", "1")])
                #expect(try withSettings[0].decode(String.self, column: 0) == expected)
            } catch {
                await pool.close()
                throw error
            }
            await pool.close()
        }
    }

    @Test func unreachableServerFailsAsUnavailable() async throws {
        let pool = try PostgresPool(configuration: .init(
            conninfo: "postgresql://nobody@127.0.0.1:1/none?connect_timeout=2", maxConnections: 1))
        let error = await #expect(throws: PostgresError.self) { try await pool.query("SELECT 1") }
        #expect(error?.kind == .connectionFailed)
        #expect(error?.isUnavailable == true)
        await pool.close()
    }

    @Test func invalidConnectionStringIsRefusedAtCreation() {
        #expect(throws: PostgresError.self) {
            _ = try PostgresPool(configuration: .init(conninfo: "host=x bogus_option=1"))
        }
    }
}

/// `PostgresPool.admission`: what a task must pass before borrowing, given back on return.
@Suite(.timeLimit(.minutes(10))) struct AdmissionHookTests {
    /// Admitted once per outermost borrowing (a nested one in the same task passes freely,
    /// else a caller with a share of one would wait for itself), given back when it ends,
    /// and a refusal reaches the caller with no connection taken.
    @Test func admittedOncePerBorrowingAndGivenBack() async throws {
        let counts = Mutex((admitted: 0, givenBack: 0))
        let admission = PostgresPool.Admission {
            counts.withLock { $0.admitted += 1 }
            return { counts.withLock { $0.givenBack += 1 } }
        }
        try await withPool(maxConnections: 2) { pool in
            try await PostgresPool.$admission.withValue(admission) {
                try await pool.withTransaction { connection in
                    try await connection.query("SELECT 1")
                    #expect(try await pool.scalar("SELECT 2::int8", as: Int.self) == 2)
                    #expect(counts.withLock { $0 } == (1, 0))
                }
                try await pool.query("SELECT 3")
            }
            #expect(counts.withLock { $0 } == (2, 2))
            struct Refused: Error {}
            await #expect(throws: Refused.self) {
                try await PostgresPool.$admission.withValue(PostgresPool.Admission { throw Refused() }) { try await pool.query("SELECT 4") }
            }
            #expect(pool.statistics.inUse == 0)
        }
    }
}
