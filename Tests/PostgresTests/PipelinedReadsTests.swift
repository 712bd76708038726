import Postgres
import TestPolling
import Testing

/// `PostgresPool.query(_:settings:)`: one statement in a transaction of its own, with
/// its settings, in one round trip (libpq pipeline mode, an implicit transaction).
@Suite struct PipelinedReadsTests {
    @Test func pipelinedReadsShareOneConnectionAndEachHasTheSettings() async throws {
        try await withPool(maxConnections: 2) { pool in
            let (first, second) = try await pool.withPipelinedReads(settings: [("app.test_value", "x")]) { reads in
                let first = try await reads.query("SELECT pg_backend_pid(), current_setting('app.test_value'), txid_current()")
                let second = try await reads.query("SELECT pg_backend_pid(), current_setting('app.test_value'), txid_current()")
                return (try first[0].decode((Int, String, Int64).self), try second[0].decode((Int, String, Int64).self))
            }
            #expect(first.0 == second.0)
            #expect(first.1 == "x" && second.1 == "x")
            // Two implicit transactions, not one.
            #expect(first.2 != second.2)
        }
    }

    @Test func settingsHoldForTheStatementOnlyAndWritesCommit() async throws {
        try await withPool(maxConnections: 1) { pool in
            let table = TestDatabase.uniqueName("pipelined")
            try await pool.query("CREATE TABLE \(identifier: table) (value int, note text)")
            let odd = "it's 100% \\ \"odd\" é"
            let echoed = try await pool.query(
                "SELECT current_setting('app.test_value'), current_setting('app.other'), \(41) + 1",
                settings: [("app.test_value", odd), ("app.other", "")])
            // A local setting lives as long as its transaction: seen here, so the settings and the
            // statement share one; gone below, so that transaction ended.
            #expect(try echoed[0].decode((String, String, Int).self) == (odd, "", 42))

            // Prepared (the default) and unprepared, reading the setting in the statement.
            for prepared in [true, false] {
                var insert: PostgresQuery = """
                    INSERT INTO \(identifier: table) SELECT current_setting('app.test_value')::int, \(prepared ? "p" : "u")
                    RETURNING value
                    """
                insert.prepared = prepared
                let rows = try await pool.query(insert, settings: [("app.test_value", "7")])
                #expect(try rows[0].decode(Int.self, column: 0) == 7)
            }
            // Committed: another statement on the same connection sees both rows, and the setting is gone.
            let after = try await pool.query(
                "SELECT count(*)::int, coalesce(current_setting('app.test_value', true), '') FROM \(identifier: table)")
            #expect(try after[0].decode((Int, String).self) == (2, ""))
            try await pool.query("DROP TABLE \(identifier: table)")
        }
    }

    @Test func oneImplicitTransactionRolledBackOnError() async throws {
        try await withPool(maxConnections: 1) { pool in
            let table = TestDatabase.uniqueName("pipelined_error")
            try await pool.query("CREATE TABLE \(identifier: table) (value int CHECK (value > 0))")
            let backend = try await pool.query("SELECT pg_backend_pid()")[0].decode(Int.self, column: 0)

            // A failing statement: its error, nothing written, the connection clean and reused.
            let error = await #expect(throws: PostgresError.self) {
                try await pool.query(
                    "INSERT INTO \(identifier: table) VALUES (\(1)), (\(-1))", settings: [("app.test_value", "y")])
            }
            #expect(error?.sqlState == "23514")
            // A bad setting name fails before the statement, which then never runs.
            await #expect(throws: PostgresError.self) {
                try await pool.query("INSERT INTO \(identifier: table) VALUES (\(2))", settings: [("not a valid name", "z")])
            }
            let after = try await pool.query(
                "SELECT pg_backend_pid(), (SELECT count(*)::int FROM \(identifier: table)), coalesce(current_setting('app.test_value', true), '')")
            #expect(try after[0].decode((Int, Int, String).self) == (backend, 0, ""))
            try await pool.query("DROP TABLE \(identifier: table)")
        }
    }

    @Test func aFailedCommitIsTheStatementsErrorAndRollsItBack() async throws {
        try await withPool(maxConnections: 1) { pool in
            let table = TestDatabase.uniqueName("pipelined_commit")
            try await pool.query("CREATE TABLE \(identifier: table) (value int UNIQUE DEFERRABLE INITIALLY DEFERRED)")
            try await pool.query("INSERT INTO \(identifier: table) VALUES (1)")
            let backend = try await pool.query("SELECT pg_backend_pid()")[0].decode(Int.self, column: 0)
            // The duplicate is only checked at the implicit COMMIT, which the pipeline's Sync makes.
            let error = await #expect(throws: PostgresError.self) {
                try await pool.query("INSERT INTO \(identifier: table) VALUES (\(1)), (\(2))", settings: [("app.test_value", "1")])
            }
            #expect(error?.kind == .server)
            #expect(error?.sqlState == "23505")
            let after = try await pool.query("SELECT pg_backend_pid(), (SELECT count(*)::int FROM \(identifier: table))")
            #expect(try after[0].decode((Int, Int).self) == (backend, 1))
            // A value libpq cannot send is refused before anything goes out; the connection stays.
            await #expect(throws: PostgresError.self) {
                try await pool.query("SELECT \("a\u{0}b")", settings: [("app.test_value", "1")])
            }
            #expect(try await pool.query("SELECT pg_backend_pid()")[0].decode(Int.self, column: 0) == backend)
            try await pool.query("DROP TABLE \(identifier: table)")
        }
    }

    @Test func aBackendEndedMidStatementFailsItAndTheNextOneGetsANewConnection() async throws {
        try await withPool(maxConnections: 1) { pool in
            let settings = [("app.test_value", "1")]
            let pid = try await pool.query("SELECT pg_backend_pid()", settings: settings)[0].decode(Int.self, column: 0)
            // A sleep far longer than the test may take: only the kill below ends it.
            let slow = Task { try await pool.query("SELECT pg_sleep(300), current_setting('app.test_value')", settings: settings) }
            try await withPool(maxConnections: 1) { killer in
                // Ended only once it runs the sleep, however slow the machine is to get there
                // (two minutes at most, which only a failing test waits out).
                let running = try await eventually {
                    try await !killer.query(
                        "SELECT 1 FROM pg_stat_activity WHERE pid = \(pid) AND state = 'active' AND query LIKE 'SELECT pg_sleep%'").isEmpty
                }
                try await killer.query("SELECT pg_terminate_backend(\(pid)::int4)")
                try #require(running, "the sleep never ran on backend \(pid)")
            }
            await #expect(throws: PostgresError.self) { _ = try await slow.value }
            // The broken connection was not kept: the next pipelined read runs on a new backend.
            let after = try await pool.query("SELECT pg_backend_pid(), current_setting('app.test_value')", settings: settings)
            let (newPID, value) = try after[0].decode((Int, String).self)
            #expect(newPID != pid)
            #expect(value == "1")
        }
    }

    @Test func aPreparedStatementSurvivesASchemaChange() async throws {
        try await withPool(maxConnections: 1) { pool in
            let table = TestDatabase.uniqueName("pipelined_schema")
            try await pool.query("CREATE TABLE \(identifier: table) (a int)")
            try await pool.query("INSERT INTO \(identifier: table) VALUES (1)")
            let select: PostgresQuery = "SELECT * FROM \(identifier: table)"
            #expect(try await pool.query(select, settings: []).count == 1)
            try await pool.query("ALTER TABLE \(identifier: table) ADD COLUMN b int")
            // The cached plan's result type changed: one failure at most, then the statement is prepared again.
            _ = try? await pool.query(select, settings: [])
            let rows = try await pool.query(select, settings: [("app.test_value", "1")])
            #expect(rows.count == 1)
            try await pool.query("DROP TABLE \(identifier: table)")
        }
    }
}
