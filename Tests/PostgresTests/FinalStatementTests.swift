import Postgres
import TestPolling
import Testing

/// `PostgresConnection.committing`: a transaction's last statement sent with its `COMMIT` in
/// one pipeline. Whatever happens to it, the transaction ends: committed with the statement,
/// or rolled back, and the connection goes back to the pool idle, never idle in a
/// transaction. What the tests read comes from a second session (`observer`), which sees only
/// committed rows and each backend's state.
@Suite(.timeLimit(.minutes(10))) struct FinalStatementTests {
    /// Long enough that a statement still running it was not cancelled; past the suite's limit.
    static let sleepSeconds = 300

    private static func table(_ observer: PostgresPool, _ prefix: String) async throws -> String {
        let table = TestDatabase.uniqueName(prefix)
        try await observer.query("CREATE TABLE \(identifier: table) (value int CHECK (value > 0) UNIQUE DEFERRABLE INITIALLY DEFERRED)")
        return table
    }

    private static func count(_ observer: PostgresPool, _ table: String) async throws -> Int {
        try await observer.scalar("SELECT count(*)::int8 FROM \(identifier: table)", as: Int.self)
    }

    /// The backend's state as another session sees it: `idle`, not `idle in transaction`.
    private static func state(_ observer: PostgresPool, pid: Int) async throws -> String? {
        try await observer.query("SELECT state FROM pg_stat_activity WHERE pid = \(pid)").first?.decode(String.self, column: 0)
    }

    /// The only statement of a transaction: `BEGIN`, its settings, the statement and `COMMIT`
    /// in one pipeline. Its rows come back, the settings held for it, the row is committed
    /// (another session sees it), and the transaction is over: its setting is gone on the
    /// same connection, which is idle.
    @Test func theOnlyStatementCommitsWithItsSettings() async throws {
        try await withPool(maxConnections: 1) { observer in
            let table = try await Self.table(observer, "final_only")
            try await withPool(maxConnections: 1) { pool in
                let pid = try await pool.scalar("SELECT pg_backend_pid()::int8", as: Int.self)
                let rows = try await pool.withTransaction(settings: [("app.test_value", "7")]) { connection in
                    try await connection.committing.query(
                        "INSERT INTO \(identifier: table) SELECT current_setting('app.test_value')::int RETURNING value, txid_current()")
                }
                #expect(try rows[0].decode(Int.self, column: 0) == 7)
                #expect(try await Self.count(observer, table) == 1)
                #expect(try await Self.state(observer, pid: pid) == "idle")
                let after = try await pool.query("SELECT pg_backend_pid()::int8, coalesce(current_setting('app.test_value', true), '')")
                #expect(try after[0].decode((Int, String).self) == (pid, ""))
            }
            try await observer.query("DROP TABLE \(identifier: table)")
        }
    }

    /// After other statements of the same transaction (which took `BEGIN` with the first of
    /// them): all of it commits at once, in one transaction.
    @Test func theLastOfSeveralStatementsCommitsThemAll() async throws {
        try await withPool(maxConnections: 1) { observer in
            let table = try await Self.table(observer, "final_last")
            try await withPool(maxConnections: 1) { pool in
                let (first, last) = try await pool.withTransaction { connection in
                    let first = try await connection.query("INSERT INTO \(identifier: table) VALUES (1) RETURNING txid_current()")
                    let last = try await connection.committing.query("INSERT INTO \(identifier: table) VALUES (2) RETURNING txid_current()")
                    return (try first[0].decode(Int64.self, column: 0), try last[0].decode(Int64.self, column: 0))
                }
                #expect(first == last)
                #expect(try await Self.count(observer, table) == 2)
                // The pool's connection took no second COMMIT: the next transaction runs on it.
                _ = try await pool.withTransaction { try await $0.committing.query("INSERT INTO \(identifier: table) VALUES (3)") }
                #expect(try await Self.count(observer, table) == 3)
            }
            try await observer.query("DROP TABLE \(identifier: table)")
        }
    }

    /// A constraint the statement breaks: its error, the `COMMIT` never runs, the whole
    /// transaction (the statement before it too) is rolled back, and the same backend is idle
    /// and answers the next statement.
    @Test func aFailingStatementRollsTheTransactionBack() async throws {
        try await withPool(maxConnections: 1) { observer in
            let table = try await Self.table(observer, "final_check")
            try await withPool(maxConnections: 1) { pool in
                let pid = try await pool.scalar("SELECT pg_backend_pid()::int8", as: Int.self)
                let error = await #expect(throws: PostgresError.self) {
                    try await pool.withTransaction { connection in
                        try await connection.query("INSERT INTO \(identifier: table) VALUES (1)")
                        try await connection.committing.query("INSERT INTO \(identifier: table) VALUES (\(-1))")
                    }
                }
                #expect(error?.sqlState == "23514")
                #expect(try await Self.count(observer, table) == 0)
                #expect(try await Self.state(observer, pid: pid) == "idle")
                #expect(try await pool.scalar("SELECT pg_backend_pid()::int8", as: Int.self) == pid)
            }
            try await observer.query("DROP TABLE \(identifier: table)")
        }
    }

    /// A deferred constraint fails at the `COMMIT` itself: that is the statement's error, the
    /// transaction is over (nothing left to roll back), and the connection is reused.
    @Test func aFailedCommitIsTheStatementsError() async throws {
        try await withPool(maxConnections: 1) { observer in
            let table = try await Self.table(observer, "final_deferred")
            try await observer.query("INSERT INTO \(identifier: table) VALUES (1)")
            try await withPool(maxConnections: 1) { pool in
                let pid = try await pool.scalar("SELECT pg_backend_pid()::int8", as: Int.self)
                let error = await #expect(throws: PostgresError.self) {
                    try await pool.withTransaction(settings: [("app.test_value", "1")]) { connection in
                        try await connection.committing.query("INSERT INTO \(identifier: table) VALUES (\(1)), (\(2))")
                    }
                }
                #expect(error?.sqlState == "23505")
                #expect(try await Self.count(observer, table) == 1)
                #expect(try await Self.state(observer, pid: pid) == "idle")
                #expect(try await pool.scalar("SELECT pg_backend_pid()::int8", as: Int.self) == pid)
                #expect(pool.statistics.open == 1 && pool.statistics.inUse == 0)
            }
            try await observer.query("DROP TABLE \(identifier: table)")
        }
    }

    /// Work after the last statement that throws cannot undo it: the transaction committed
    /// with the statement, and ending it sends nothing more.
    @Test func anErrorAfterTheLastStatementLeavesItCommitted() async throws {
        try await withPool(maxConnections: 1) { observer in
            let table = try await Self.table(observer, "final_later")
            try await withPool(maxConnections: 1) { pool async throws -> Void in
                await #expect(throws: WorkAfterTheLastStatement.self) {
                    try await pool.withTransaction { connection -> Void in
                        try await connection.committing.query("INSERT INTO \(identifier: table) VALUES (5)")
                        throw WorkAfterTheLastStatement()
                    }
                }
                #expect(try await Self.count(observer, table) == 1)
                #expect(pool.statistics.inUse == 0 && pool.statistics.idle == 1)
            }
            try await observer.query("DROP TABLE \(identifier: table)")
        }
    }

    /// The pool's statement timeout, and a task cancelled while its statement runs (a client
    /// gone): the server's cancellation (57014), nothing written, the backend idle.
    @Test func aTimeoutOrACancelledTaskRollsItBack() async throws {
        try await withPool(maxConnections: 1) { observer in
            let table = try await Self.table(observer, "final_cancel")
            let write: PostgresQuery = "INSERT INTO \(identifier: table) SELECT 1 FROM pg_sleep(\(literal: Self.sleepSeconds))"
            try await withPool(maxConnections: 1, statementTimeout: .milliseconds(200)) { pool in
                let pid = try await pool.scalar("SELECT pg_backend_pid()::int8", as: Int.self)
                let error = await #expect(throws: PostgresError.self) {
                    try await pool.withTransaction { try await $0.committing.query(write) }
                }
                #expect(error?.isCancellation == true, "\(String(describing: error))")
                #expect(try await Self.state(observer, pid: pid) == "idle")
            }
            try await withPool(maxConnections: 1) { pool in
                let pid = try await pool.scalar("SELECT pg_backend_pid()::int8", as: Int.self)
                let statement = Task { try await pool.withTransaction { try await $0.committing.query(write) } }
                try #require(
                    try await eventually {
                        try await !observer.query(
                            "SELECT FROM pg_stat_activity WHERE pid = \(pid) AND state = 'active' AND query LIKE 'INSERT INTO%pg_sleep%'").isEmpty
                    })
                statement.cancel()
                let outcome = await statement.result
                #expect(throws: PostgresError.self) { try outcome.get() }
                if case .failure(let error as PostgresError) = outcome { #expect(error.isCancellation, "\(error)") }
                #expect(try await Self.state(observer, pid: pid) == "idle")
                #expect(try await pool.scalar("SELECT pg_backend_pid()::int8", as: Int.self) == pid)
            }
            #expect(try await Self.count(observer, table) == 0)
            try await observer.query("DROP TABLE \(identifier: table)")
        }
    }

    /// A check ahead of the statement (`checked(by:)`), in its pipeline and transaction: one
    /// that passes lets the statement run and commit with it, and the rows are the statement's;
    /// one that raises is the call's error, the statement never runs, and the transaction is
    /// rolled back with the backend idle. The same on a statement that does not commit, and
    /// on pipelined reads.
    @Test func aCheckAheadOfTheStatementDecidesWhetherItRuns() async throws {
        try await withPool(maxConnections: 1) { observer in
            let table = try await Self.table(observer, "final_checked")
            try await withPool(maxConnections: 1) { pool in
                let pid = try await pool.scalar("SELECT pg_backend_pid()::int8", as: Int.self)
                let passes: PostgresQuery = "SELECT 1 / \(1), txid_current()"
                let raises: PostgresQuery = "SELECT 1 / \(0), txid_current()"
                let rows = try await pool.withTransaction(settings: [("app.test_value", "5")]) { connection in
                    try await connection.committing.checked(by: passes).query(
                        "INSERT INTO \(identifier: table) SELECT current_setting('app.test_value')::int RETURNING value")
                }
                #expect(try rows[0].decode(Int.self, column: 0) == 5)
                #expect(try await Self.count(observer, table) == 1)

                let refused = await #expect(throws: PostgresError.self) {
                    try await pool.withTransaction { connection in
                        try await connection.query("INSERT INTO \(identifier: table) VALUES (6)")
                        try await connection.committing.checked(by: raises).query("INSERT INTO \(identifier: table) VALUES (7)")
                    }
                }
                #expect(refused?.sqlState == "22012")
                let inTransaction = await #expect(throws: PostgresError.self) {
                    try await pool.withTransaction { connection in
                        try await connection.checked(by: raises).query("INSERT INTO \(identifier: table) VALUES (8)")
                    }
                }
                #expect(inTransaction?.sqlState == "22012")
                #expect(try await Self.count(observer, table) == 1)
                #expect(try await Self.state(observer, pid: pid) == "idle")

                // Pipelined reads: the check and the read in one implicit transaction.
                let read = try await pool.withPipelinedReads(settings: [("app.test_value", "9")]) { reads in
                    try await reads.checked(by: passes).query("SELECT current_setting('app.test_value')")
                }
                #expect(try read[0].decode(String.self, column: 0) == "9")
                let readRefused = await #expect(throws: PostgresError.self) {
                    try await pool.withPipelinedReads(settings: []) { try await $0.checked(by: raises).query("SELECT 1") }
                }
                #expect(readRefused?.sqlState == "22012")
                #expect(try await pool.scalar("SELECT 2::int8", as: Int.self) == 2)
            }
            try await observer.query("DROP TABLE \(identifier: table)")
        }
    }
}

private struct WorkAfterTheLastStatement: Error {}
