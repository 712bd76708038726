import Postgres
import Testing

/// What may enter a statement's text besides bound values: program text (`StaticString`),
/// integers, and names quoted as identifiers, which no text can break out of.
@Suite(.timeLimit(.minutes(10))) struct QueryTextTests {
    @Test func identifiersAreQuotedSoAnyNameStaysOneName() async throws {
        try await withPool { pool in
            for name in ["plain", "Mixed Case", "with \"quotes\"", "x\"; DROP TABLE t; --", "ünïcödé"] {
                let rows = try await pool.query("SELECT \(identifier: name) FROM (SELECT 7 AS \(identifier: name)) t")
                let value = try rows[0].decode(Int.self, column: 0)
                #expect(value == 7, "\(name)")
            }
        }
    }

    @Test func literalsAreIntegersInTheText() async throws {
        try await withPool { pool in
            let query: PostgresQuery = "SELECT generate_series(1, 10) LIMIT \(literal: 3)"
            #expect(query.sql == "SELECT generate_series(1, 10) LIMIT 3" && query.binds.isEmpty)
            let count = try await pool.query(query).count
            #expect(count == 3)
            let prepared: PostgresQuery = "SELECT \(5) + \(6)"
            let text: PostgresQuery = "PREPARE sum_of AS \(textOf: prepared)"
            #expect(text.sql == "PREPARE sum_of AS SELECT $1 + $2" && text.binds.isEmpty)
        }
    }

    @Test func joinedFragmentsNumberTheirParametersInOrder() async throws {
        try await withPool { pool in
            let parts: [PostgresQuery] = ["\(1) + \(10)", "\(2)", "\("three")::text"]
            let query: PostgresQuery = "SELECT \(parts.joined(separator: ", ")), \(4)"
            #expect(query.sql == "SELECT $1 + $2, $3, $4::text, $5" && query.binds.count == 5)
            let rows = try await pool.query(query)
            let values = (try rows[0].decode(Int.self, column: 0), try rows[0].decode(Int.self, column: 1),
                          try rows[0].decode(String.self, column: 2), try rows[0].decode(Int.self, column: 3))
            #expect(values == (11, 2, "three", 4))
            let none: [PostgresQuery] = []
            #expect(none.joined(separator: " OR ").sql.isEmpty)
        }
    }
}
