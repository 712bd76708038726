/// A SQL statement whose interpolated values travel as bound parameters.
///
/// `"SELECT * FROM users WHERE id = \(id) AND name = \(name)"` becomes
/// `SELECT * FROM users WHERE id = $1 AND name = $2` with `id` and `name`
/// sent separately; there is no way to splice a value into the SQL text
/// except `\(unsafeSQL:)`, which takes only a `StaticString` (program text), and the
/// safe forms `\(literal:)` (an integer) and `\(identifier:)` (a quoted name).
/// Queries compose: `\(fragment)` or `+` joins two and renumbers their parameters.
public struct PostgresQuery: Sendable, Hashable, ExpressibleByStringInterpolation {
    /// SQL text with a NUL where each parameter goes. NUL can never occur in a
    /// statement libpq sends (it takes C strings), so it cannot clash with SQL text,
    /// and composing fragments needs no renumbering until `sql` is rendered. A connection
    /// knows its prepared statements by it, so a statement prepared already is run without
    /// rendering its `sql` again.
    private(set) var template: String
    public private(set) var binds: [PostgresBind]
    /// Whether the statement is prepared once per connection and reused, with one plan for
    /// every value (`PostgresPool.Configuration.plansPreparedOnce`).
    /// Turn it off for statements whose best plan depends on the values
    /// (`ILIKE` patterns, skewed filters): each run is then planned for its own values.
    public var prepared: Bool = true

    static let placeholder: Character = "\u{0}"

    /// Scans bytes, not `Character`s: grapheme breaking over every statement's text
    /// on every request showed in the benchmark's profile.
    static func containsPlaceholder(_ text: String) -> Bool {
        text.utf8.contains(0)
    }

    public init(stringLiteral value: String) {
        precondition(!Self.containsPlaceholder(value), "SQL text cannot contain NUL")
        self.template = value
        self.binds = []
    }

    public init(stringInterpolation: StringInterpolation) {
        self.template = stringInterpolation.template
        self.binds = stringInterpolation.binds
    }

    /// The SQL text with `$1`, `$2`, … in place of the values.
    public var sql: String { sql(numberingFrom: 1) }

    /// The SQL text with `$first`, `$(first + 1)`, … in place of the values: for a function
    /// body whose own arguments come before the statement's.
    func sql(numberingFrom first: Int) -> String {
        guard !binds.isEmpty else { return template }
        var rendered = [UInt8]()
        rendered.reserveCapacity(template.utf8.count + binds.count * 3)
        var number = first - 1
        for byte in template.utf8 {
            if byte == 0 {
                number += 1
                rendered.append(UInt8(ascii: "$"))
                rendered.append(contentsOf: String(number).utf8)
            } else {
                rendered.append(byte)
            }
        }
        return String(decoding: rendered, as: UTF8.self)
    }

    /// Appends another query fragment; its parameters follow ours.
    public mutating func append(_ other: PostgresQuery) {
        template += other.template
        binds += other.binds
    }

    /// Appends one parameter as it is (its type and value).
    mutating func append(bind: PostgresBind) {
        template.append(Self.placeholder)
        binds.append(bind)
    }

    public static func + (lhs: PostgresQuery, rhs: PostgresQuery) -> PostgresQuery {
        var result = lhs
        result.append(rhs)
        return result
    }

    /// Builds SQL text and its parameters from an interpolated literal.
    public struct StringInterpolation: StringInterpolationProtocol, Sendable {
        public typealias StringLiteralType = String
        var template: String
        var binds: [PostgresBind]

        public init(literalCapacity: Int, interpolationCount: Int) {
            template = ""
            template.reserveCapacity(literalCapacity + interpolationCount)
            binds = []
            binds.reserveCapacity(interpolationCount)
        }

        public mutating func appendLiteral(_ literal: String) {
            // A literal is program text, so a debug build (every test) checks it once is enough.
            assert(!PostgresQuery.containsPlaceholder(literal), "SQL text cannot contain NUL")
            template += literal
        }

        /// A value, sent as a bound parameter.
        public mutating func appendInterpolation<Value: PostgresEncodable>(_ value: Value) {
            binds.append(value.postgresBind)
            template.append(PostgresQuery.placeholder)
        }

        /// An optional value; `nil` is sent as NULL.
        public mutating func appendInterpolation<Value: PostgresEncodable>(_ value: Value?) {
            binds.append(value?.postgresBind ?? PostgresBind(oid: Value.postgresTypeOID, value: .null))
            template.append(PostgresQuery.placeholder)
        }

        /// Raw SQL text: only program text, which a `StaticString` is (it cannot hold input).
        public mutating func appendInterpolation(unsafeSQL text: StaticString) {
            let text = text.description
            assert(!PostgresQuery.containsPlaceholder(text), "SQL text cannot contain NUL")
            template += text
        }

        /// An integer written into the SQL text rather than bound: for program constants a
        /// generic plan must see (a `LIMIT`; a bound one is guessed at a tenth of the table).
        public mutating func appendInterpolation(literal value: Int) {
            template += String(value)
        }

        /// A name (table, database, column alias) as a quoted identifier: any text is safe
        /// here, since a `"` inside is doubled.
        public mutating func appendInterpolation(identifier name: String) {
            precondition(!PostgresQuery.containsPlaceholder(name), "SQL text cannot contain NUL")
            template.append("\"")
            for character in name {
                template.append(character)
                if character == "\"" { template.append("\"") }
            }
            template.append("\"")
        }

        /// Another statement's SQL text with its `$n` placeholders and without its values:
        /// for `PREPARE name AS …`, whose `EXECUTE` supplies them.
        public mutating func appendInterpolation(textOf query: PostgresQuery) {
            template += query.sql
        }

        /// Another fragment, with its parameters numbered after ours.
        public mutating func appendInterpolation(_ fragment: PostgresQuery) {
            template += fragment.template
            binds += fragment.binds
        }
    }
}

extension Sequence where Element == PostgresQuery {
    /// The fragments one after another with `separator` between them (`" OR "`, `", "`,
    /// `"\nUNION ALL\n"`), each fragment's parameters numbered after those before it.
    public func joined(separator: PostgresQuery) -> PostgresQuery {
        var result: PostgresQuery = ""
        for (index, fragment) in enumerated() {
            if index > 0 { result.append(separator) }
            result.append(fragment)
        }
        return result
    }
}
