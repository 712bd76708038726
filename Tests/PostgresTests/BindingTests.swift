import Foundation
import Postgres
import Testing

@Suite(.timeLimit(.minutes(1))) struct BindingTests {
    static let awkwardStrings = [
        "", "plain", "it's", "\"double\"", "back\\slash", "\\x00", "100%", "under_score", "%_\\",
        "'; DROP TABLE t; --", "emoji 👩‍👩‍👧‍👦 🇦🇺", "مرحبا بالعالم", "e\u{301}\u{302} combining", "tab\tnew\nline",
        "NULL", "{braces,commas}", String(repeating: "long ", count: 2_000),
    ]

    @Test func stringsRoundTrip() async throws {
        try await withPool { pool in
            for value in Self.awkwardStrings {
                let rows = try await pool.query("SELECT \(value)::text, length(\(value))")
                let (echo, length) = try rows[0].decode((String, Int).self)
                #expect(echo == value)
                #expect(length == value.unicodeScalars.count)
            }
        }
    }

    @Test func integersRoundTrip() async throws {
        try await withPool { pool in
            for value in [Int64.min, -1, 0, 1, Int64.max] {
                let rows = try await pool.query("SELECT \(value)::int8, \(Int(value))::int8")
                let (a, b) = try rows[0].decode((Int64, Int).self)
                #expect(a == value)
                #expect(Int64(b) == value)
            }
            let int4 = try await pool.query("SELECT \(Int32.min)::int4, \(Int32.max)::int4")
            let (low, high) = try int4[0].decode((Int32, Int32).self)
            #expect(low == Int32.min)
            #expect(high == Int32.max)
        }
    }

    @Test func doublesRoundTripIncludingSpecialValues() async throws {
        try await withPool { pool in
            for value in [0.0, -0.5, 151.2093, -33.8688, .pi, 1e-300, 1.7976931348623157e308, .infinity, -.infinity] {
                let rows = try await pool.query("SELECT \(value)::float8")
                #expect(try rows[0].decode(Double.self, column: 0) == value)
            }
            let nan = try await pool.query("SELECT \(Double.nan)::float8")
            #expect(try nan[0].decode(Double.self, column: 0).isNaN)
        }
    }

    /// Timestamps are parsed by hand (calendar arithmetic, no `timegm`): the server's
    /// own rendering of instants over years 1 to 9999 must come back exactly.
    @Test func timestampsDecodeAcrossTheCalendar() async throws {
        try await withPool { pool in
            var generator = SystemRandomNumberGenerator()
            let edges: [Int64] = [-62_135_596_800, -2_203_891_200, -1, 0, 951_782_399, 951_868_800, 253_402_300_799]
            let seconds = edges + (0..<2000).map { _ in Int64.random(in: -62_135_596_800...253_402_300_799, using: &generator) }
            let rows = try await pool.query("SELECT s, to_timestamp(s) + interval '0.25 ms' FROM unnest(\(seconds)) AS s")
            #expect(rows.count == seconds.count)
            for row in rows {
                let (second, date) = try row.decode((Int64, Date).self)
                #expect(abs(date.timeIntervalSince1970 - (Double(second) + 0.000_25)) < 0.000_01, "\(second)")
            }
        }
    }

    @Test func boolsDatesAndBytesRoundTrip() async throws {
        try await withPool { pool in
            let bools = try await pool.query("SELECT \(true), \(false)")
            let (yes, no) = try bools[0].decode((Bool, Bool).self)
            #expect(yes && !no)

            // Microseconds survive; a timestamptz has no finer resolution.
            let date = Date(timeIntervalSince1970: 1_795_000_000.123456)
            let dates = try await pool.query("SELECT \(date)::timestamptz, '2026-11-21T09:30:00.123Z'::timestamptz")
            let (echo, literal) = try dates[0].decode((Date, Date).self)
            #expect(abs(echo.timeIntervalSince1970 - date.timeIntervalSince1970) < 0.000_001)
            #expect(abs(literal.timeIntervalSince1970 - 1_795_253_400.123) < 0.000_001)

            let allBytes = PostgresBytes(Array(0...255) + [0, 0])
            let bytes = try await pool.query("SELECT \(allBytes)::bytea, length(\(allBytes))")
            let (bytesEcho, length) = try bytes[0].decode((PostgresBytes, Int).self)
            #expect(bytesEcho == allBytes)
            #expect(length == 258)
        }
    }

    @Test func arraysRoundTrip() async throws {
        try await withPool { pool in
            let strings = ["a", "", "with,comma", "{brace}", "quote\"d", "back\\slash", "NULL", "sp ace", "ünï"]
            let rows = try await pool.query("SELECT \(strings)::text[], cardinality(\(strings)::text[])")
            let (echo, count) = try rows[0].decode(([String], Int).self)
            #expect(echo == strings)
            #expect(count == strings.count)

            let numbers: [Int64] = [Int64.min, 0, 42, Int64.max]
            let numberRows = try await pool.query("SELECT \(numbers)::int8[], ARRAY[1,2,3]::int4[], '{}'::text[]")
            let (numberEcho, small, empty) = try numberRows[0].decode(([Int64], [Int], [String]).self)
            #expect(numberEcho == numbers)
            #expect(small == [1, 2, 3])
            #expect(empty == [])
        }
    }

    @Test func nullsDecodeAsOptionals() async throws {
        try await withPool { pool in
            let missing: String? = nil
            let rows = try await pool.query("SELECT \(missing)::text, NULL::int8, \(Optional("x"))::text")
            let (text, number, present) = try rows[0].decode((String?, Int64?, String?).self)
            #expect(text == nil)
            #expect(number == nil)
            #expect(present == "x")
        }
    }

    @Test func composedQueriesRenumberParameters() async throws {
        try await withPool { pool in
            var query: PostgresQuery = "SELECT \(1)::int8 + \(2)::int8"
            let fragment: PostgresQuery = " + \(3)::int8"
            query.append(fragment)
            query = query + " + \(4)::int8"
            #expect(query.sql == "SELECT $1::int8 + $2::int8 + $3::int8 + $4::int8")
            let nested: PostgresQuery = "SELECT (\(query.binds.count))::int8 AS n, sum(x)::int8 FROM (\(query)) AS inner_query(x)"
            let rows = try await pool.query(nested)
            let (count, sum) = try rows[0].decode((Int64, Int64).self)
            #expect(count == 4)
            #expect(sum == 10)
        }
    }

    @Test func unpreparedStatementsBehaveTheSame() async throws {
        try await withPool { pool in
            var query: PostgresQuery = "SELECT \("same")::text"
            query.prepared = false
            let echo = try await pool.query(query)[0].decode(String.self, column: 0)
            #expect(echo == "same")
        }
    }

    @Test func textWithNULIsRefusedRatherThanCut() async throws {
        try await withPool { pool in
            let error = await #expect(throws: PostgresError.self) { try await pool.query("SELECT \("a\u{0}b")::text") }
            #expect(error?.kind == .invalidValue)
            let arrayError = await #expect(throws: PostgresError.self) { try await pool.query("SELECT \(["ok", "a\u{0}b"])::text[]") }
            #expect(arrayError?.kind == .invalidValue)
            let still = try await pool.query("SELECT \("fine")::text")
            #expect(try still[0].decode(String.self, column: 0) == "fine")
        }
    }
}
