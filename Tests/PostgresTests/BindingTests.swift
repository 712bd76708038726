import Foundation
import Postgres
import Testing

@Suite(.timeLimit(.minutes(10))) struct BindingTests {
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

    /// Timestamps arrive in binary (microseconds since 2000-01-01): instants over years
    /// 1 to 9999 must come back exactly.
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

    /// Binary results: timestamps before 1970, past 2038 and at the edges of the range,
    /// with microseconds, both as results and as parameters; infinity refused.
    @Test func timestampsInBinaryAcrossEpochsAndInfinity() async throws {
        try await withPool { pool in
            let cases: [(String, Double)] = [
                ("1969-12-31 23:59:59.999999+00", -0.000_001),
                ("1901-12-13 20:45:52.000001+00", -2_147_483_647.999_999),
                ("0001-01-01 00:00:00+00", -62_135_596_800),
                ("1999-12-31 23:59:59.5+00", 946_684_799.5),
                ("2000-01-01 00:00:00+00", 946_684_800),
                ("2038-01-19 03:14:08.000001+00", 2_147_483_648.000_001),
                // Far out, a Date (a Double of seconds since 2001) holds microseconds no more:
                // whole seconds there.
                ("2262-04-11 23:47:16+00", 9_223_372_036),
                ("9999-12-31 23:59:59+00", 253_402_300_799),
            ]
            for (text, seconds) in cases {
                let rows = try await pool.query("SELECT \(text)::timestamptz, \(text)::timestamptz::timestamp, to_char(\(text)::timestamptz, 'US')")
                let (date, plain, micros) = try rows[0].decode((Date, Date, String).self)
                #expect(abs(date.timeIntervalSince1970 - seconds) < 0.000_000_5, "\(text): \(date.timeIntervalSince1970)")
                #expect(plain == date, "\(text)")
                // Sent back as a parameter, the same microsecond.
                let echo = try await pool.query("SELECT \(date) = \(text)::timestamptz, to_char(\(date), 'US')")
                let (same, echoedMicros) = try echo[0].decode((Bool, String).self)
                #expect(same && echoedMicros == micros, "\(text): \(echoedMicros)")
            }
            for infinite in ["infinity", "-infinity"] {
                let rows = try await pool.query("SELECT \(infinite)::timestamptz AS instant")
                let error = #expect(throws: PostgresError.self) { try rows[0].decode(Date.self, column: 0) }
                #expect(error?.kind == .decoding)
                #expect(error?.columnName == "instant")
            }
        }
    }

    /// Numbers at their limits, each in its own binary form.
    @Test func numbersAtTheirLimitsInBinary() async throws {
        try await withPool { pool in
            let integers = try await pool.query("""
                SELECT (-32768)::int2, 32767::int2, (-2147483648)::int4, 2147483647::int4,
                       (-9223372036854775808)::int8, 9223372036854775807::int8, 4294967295::oid
                """)
            let (int2Low, int2High, int4Low, int4High, int8Low, int8High, oid) =
                try integers[0].decode((Int, Int, Int32, Int32, Int64, Int64, Int64).self)
            #expect((int2Low, int2High) == (-32768, 32767))
            #expect((int4Low, int4High) == (Int32.min, Int32.max))
            #expect((int8Low, int8High) == (Int64.min, Int64.max))
            #expect(oid == 4_294_967_295)
            // An int8 that does not fit an Int32 is refused, not truncated.
            #expect(throws: PostgresError.self) { try integers[0].decode(Int32.self, column: 4) }

            let floats = try await pool.query("""
                SELECT 0.1::real, 3.4028235e38::real, 1.4e-45::real, 'NaN'::real,
                       1.7976931348623157e308::float8, 5e-324::float8, '-Infinity'::float8, '-0'::float8
                """)
            let (tenth, realMax, realTiny, realNaN, doubleMax, doubleTiny, negativeInfinity, negativeZero) =
                try floats[0].decode((Double, Double, Double, Double, Double, Double, Double, Double).self)
            #expect(tenth == 0.1)
            #expect(realMax == 3.4028235e38)
            #expect(realTiny == 1e-45)  // as PostgreSQL prints the smallest real
            #expect(realNaN.isNaN)
            #expect(doubleMax == .greatestFiniteMagnitude)
            #expect(doubleTiny == .leastNonzeroMagnitude)
            #expect(negativeInfinity == -.infinity)
            #expect(negativeZero == 0 && negativeZero.sign == .minus)

            let numerics = try await pool.query("""
                SELECT 0::numeric, 123.456789::numeric, (-0.000012)::numeric, 10000::numeric,
                       1e300::numeric, 'NaN'::numeric, 12345678901234567890.123456789::numeric, round(2.0 / 3, 20)
                """)
            let (zero, plain, small, tenThousand, huge, numericNaN, long, third) =
                try numerics[0].decode((Double, Double, Double, Double, Double, Double, Double, Double).self)
            #expect(zero == 0)
            #expect(plain == 123.456789)
            #expect(small == -0.000012)
            #expect(tenThousand == 10000)
            #expect(huge == 1e300)
            #expect(numericNaN.isNaN)
            #expect(long == 12345678901234567890.123456789)
            #expect(third == 0.66666666666666666667)
        }
    }

    /// jsonb's version byte, uuid's 16 bytes, and text-format results (the simple protocol)
    /// that only String reads: anything else is refused, not misread.
    @Test func otherBinaryFormsAndTextResultsRefused() async throws {
        try await withPool { pool in
            let rows = try await pool.query("""
                SELECT '{"a": [1, "é"]}'::jsonb, '{"b":1}'::json, 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'::uuid, 'x'::name, 'y'::char(2)
                """)
            let (jsonb, json, uuid, name, padded) = try rows[0].decode((String, String, String, String, String).self)
            #expect(jsonb == #"{"a": [1, "é"]}"#)
            #expect(json == #"{"b":1}"#)
            #expect(uuid == "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")
            #expect(name == "x" && padded == "y ")
            #expect(rows.columns.allSatisfy { $0.format == .binary })

            try await pool.withConnection { connection in
                let text = try await connection.execute(unsafeSQL: "SELECT 'z'::text, 42::int8, now()")
                #expect(text.columns.allSatisfy { $0.format == .text })
                #expect(try text[0].decode(String.self, column: 0) == "z")
                let refused = #expect(throws: PostgresError.self) { try text[0].decode(Int.self, column: 1) }
                #expect(refused.map { String(describing: $0).contains("text type OID 20") } == true)
                #expect(throws: PostgresError.self) { try text[0].decode(Date.self, column: 2) }
            }
            // A type no decoder reads is refused too.
            let point = try await pool.query("SELECT point(1, 2)")
            #expect(throws: PostgresError.self) { try point[0].decode(String.self, column: 0) }
            #expect(throws: PostgresError.self) { try point[0].decode(Double.self, column: 0) }
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
