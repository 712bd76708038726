import Foundation
import Postgres
import Testing

@Suite(.timeLimit(.minutes(10))) struct ErrorTests {
    @Test func injectionIsStoredVerbatimAndTheTableSurvives() async throws {
        try await withPool { pool in
            let table = TestDatabase.uniqueName("injection")
            try await pool.query("CREATE TABLE \(identifier: table) (value text)")
            let hostile = ["'; DROP TABLE \(table); --", "\\'; DROP TABLE \(table); --", "$1", "\u{2019}; SELECT 1"]
            for value in hostile {
                try await pool.query("INSERT INTO \(identifier: table) (value) VALUES (\(value))")
            }
            let rows = try await pool.query("SELECT value FROM \(identifier: table) ORDER BY value")
            #expect(Set(try rows.map { try $0.decode(String.self, column: 0) }) == Set(hostile))
            try await pool.query("DROP TABLE \(identifier: table)")
        }
    }

    @Test func uniqueViolationCarriesSQLStateAndConstraint() async throws {
        try await withPool { pool in
            let table = TestDatabase.uniqueName("unique")
            try await pool.query("CREATE TABLE \(identifier: table) (name text CONSTRAINT \(identifier: table + "_name_key") UNIQUE)")
            try await pool.query("INSERT INTO \(identifier: table) VALUES (\("alice"))")
            let error = await #expect(throws: PostgresError.self) {
                try await pool.query("INSERT INTO \(identifier: table) VALUES (\("alice"))")
            }
            #expect(error?.sqlState == "23505")
            #expect(error?.constraintName == "\(table)_name_key")
            #expect(error?.tableName == table)
            #expect(error?.isUniqueViolation(constraint: "\(table)_name_key") == true)
            // The description never quotes the offending value.
            #expect(error.map { !String(describing: $0).contains("alice") } == true)
            try await pool.query("DROP TABLE \(identifier: table)")
        }
    }

    /// `description` is safe for a client's log; `String(reflecting:)` has what a developer
    /// needs: SQLSTATE, message, detail, hint, constraint, and where the query was run from.
    @Test func debugDescriptionHasTheServerFieldsAndTheCallSite() async throws {
        try await withPool { pool in
            let table = TestDatabase.uniqueName("debug")
            try await pool.query("CREATE TABLE \(identifier: table) (name text CONSTRAINT \(identifier: table + "_key") UNIQUE)")
            try await pool.query("INSERT INTO \(identifier: table) VALUES (\("bob"))")
            let duplicateLine = #line; let duplicate = await #expect(throws: PostgresError.self) { try await pool.query("INSERT INTO \(identifier: table) VALUES (\("bob"))") }
            let reflected = duplicate.map { String(reflecting: $0) } ?? ""
            #expect(reflected.contains("SQLSTATE 23505"), "\(reflected)")
            #expect(reflected.contains("duplicate key value violates unique constraint"), "\(reflected)")
            #expect(reflected.contains("Key (name)=(bob) already exists."), "\(reflected)")
            #expect(reflected.contains("constraint: \(table)_key"), "\(reflected)")
            #expect(reflected.contains("PostgresTests/ErrorTests.swift:\(duplicateLine)"), "\(reflected)")
            #expect(duplicate.map { !String(describing: $0).contains("bob") && !String(describing: $0).contains("ErrorTests") } == true)
            try await pool.query("DROP TABLE \(identifier: table)")

            // A hint, through each entry point: the innermost call site is the one reported.
            let raise: PostgresQuery = """
                DO $$ BEGIN RAISE EXCEPTION 'raised here' USING DETAIL = 'the detail', HINT = 'the hint'; END $$
                """
            var lines: [Int] = []
            var errors: [PostgresError?] = []
            lines.append(#line); errors.append(await #expect(throws: PostgresError.self) { try await pool.withTransaction { try await $0.query(raise) } })
            lines.append(#line); errors.append(await #expect(throws: PostgresError.self) { try await pool.withPipelinedReads(settings: []) { try await $0.query(raise) } })
            lines.append(#line); errors.append(await #expect(throws: PostgresError.self) { try await pool.query(raise, settings: [("app.test_value", "1")]) })
            lines.append(#line); errors.append(await #expect(throws: PostgresError.self) { try await pool.withConnection { try await $0.execute(unsafeSQL: "SELEKT 1") } })
            for (line, error) in zip(lines, errors) {
                let reflected = error.map { String(reflecting: $0) } ?? ""
                #expect(reflected.contains("PostgresTests/ErrorTests.swift:\(line)"), "\(reflected)")
                if line != lines.last {
                    #expect(reflected.contains("SQLSTATE P0001: raised here; detail: the detail; hint: the hint"), "\(reflected)")
                } else {
                    #expect(reflected.contains("SQLSTATE 42601"), "\(reflected)")
                }
            }
        }
    }

    @Test func syntaxErrorIs42601AndTheConnectionStaysUsable() async throws {
        try await withPool(maxConnections: 1) { pool in
            let error = await #expect(throws: PostgresError.self) { try await pool.query("SELEKT 1") }
            #expect(error?.sqlState == "42601")
            #expect(error?.kind == .server)
            let one = try await pool.scalar("SELECT 1::int8", as: Int.self)
            #expect(one == 1)
        }
    }

    @Test func decodingTheWrongTypeNamesTheColumn() async throws {
        try await withPool { pool in
            let rows = try await pool.query("SELECT 'text'::text AS greeting, NULL::int8 AS nothing")
            let wrongType = #expect(throws: PostgresError.self) { try rows[0].decode(Int.self, column: 0) }
            #expect(wrongType?.kind == .decoding)
            #expect(wrongType?.columnName == "greeting")
            #expect(wrongType.map { String(describing: $0).contains("greeting") } == true)
            let null = #expect(throws: PostgresError.self) { try rows[0].decode((String, Int).self) }
            #expect(null?.columnName == "nothing")
        }
    }

    @Test func transactionsCommitOrRollBack() async throws {
        try await withPool { pool in
            let table = TestDatabase.uniqueName("tx")
            try await pool.query("CREATE TABLE \(identifier: table) (value int8)")
            struct Boom: Error {}
            await #expect(throws: Boom.self) {
                try await pool.withTransaction { connection in
                    try await connection.query("INSERT INTO \(identifier: table) VALUES (\(1))")
                    throw Boom()
                }
            }
            let setting = try await pool.withTransaction(settings: [("app.test_value", "42")]) { connection in
                try await connection.query("INSERT INTO \(identifier: table) VALUES (\(2))")
                return try await connection.query("SELECT current_setting('app.test_value')")[0].decode(String.self, column: 0)
            }
            #expect(setting == "42")
            let values = try await pool.query("SELECT value FROM \(identifier: table)").map { try $0.decode(Int.self, column: 0) }
            #expect(values == [2])
            // The setting lasted only as long as its transaction, on every pooled connection.
            for _ in 0..<4 {
                let after = try await pool.query("SELECT coalesce(current_setting('app.test_value', true), '')")
                #expect(try after[0].decode(String.self, column: 0) == "")
            }
            try await pool.query("DROP TABLE \(identifier: table)")
        }
    }

    @Test func preparedStatementsRecoverAfterASchemaChange() async throws {
        try await withPool(maxConnections: 1) { pool in
            let table = TestDatabase.uniqueName("reprepare")
            try await pool.query("CREATE TABLE \(identifier: table) (a int8)")
            let select: PostgresQuery = "SELECT * FROM \(identifier: table)"
            _ = try await pool.query(select)
            try await pool.query("ALTER TABLE \(identifier: table) ADD COLUMN b text")
            // The server refuses the stale plan once; the statement is then prepared afresh under a new name.
            let stale = await #expect(throws: PostgresError.self) { try await pool.query(select) }
            #expect(stale?.sqlState == "0A000")
            let rows = try await pool.query(select)
            #expect(rows.columns.map(\.name) == ["a", "b"])
            try await pool.query("DROP TABLE \(identifier: table)")
        }
    }

    /// BEGIN and the settings travel with the first statement: a setting's value is
    /// quoted by libpq however odd it is, a body that runs no statement sends nothing,
    /// and a failing first statement leaves a connection the pool can reuse.
    @Test func deferredBeginQuotesSettingsAndCostsNothingUnused() async throws {
        try await withPool(maxConnections: 1) { pool in
            let odd = "it's; SELECT pg_sleep(10); -- \\ 東京"
            let echoed = try await pool.withTransaction(settings: [("app.test_value", odd), ("app.other", "")]) { connection in
                try await connection.query("SELECT current_setting('app.test_value'), current_setting('app.other'), now() = statement_timestamp()")[0]
                    .decode((String, String, Bool).self)
            }
            #expect(echoed.0 == odd)
            #expect(echoed.1 == "")
            // now() is the transaction's start: BEGIN really came before the statement, not with it.
            let (first, second) = try await pool.withTransaction(settings: [("app.test_value", "1")]) { connection in
                let first = try await connection.query("SELECT now()")[0].decode(Date.self, column: 0)
                try await Task.sleep(for: .milliseconds(20))
                let second = try await connection.query("SELECT now()")[0].decode(Date.self, column: 0)
                return (first, second)
            }
            #expect(first == second)
            let backend = try await pool.query("SELECT pg_backend_pid()")[0].decode(Int.self, column: 0)
            let untouched: Int = try await pool.withTransaction(settings: [("app.test_value", "2")]) { _ in 7 }
            #expect(untouched == 7)
            await #expect(throws: PostgresError.self) {
                try await pool.withTransaction(settings: [("app.test_value", "3")]) { connection in
                    try await connection.query("SELECT 1 / 0")
                }
            }
            // The same single connection, still usable and outside any transaction.
            let after = try await pool.query("SELECT pg_backend_pid(), coalesce(current_setting('app.test_value', true), '')")[0]
                .decode((Int, String).self)
            #expect(after.0 == backend)
            #expect(after.1 == "")
        }
    }
}
