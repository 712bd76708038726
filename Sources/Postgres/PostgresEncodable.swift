import Foundation

/// A Swift value that can travel as a bound parameter.
public protocol PostgresEncodable: Sendable {
    /// The parameter's type as the server should see it.
    static var postgresTypeOID: UInt32 { get }
    var postgresBind: PostgresBind { get }
}

extension PostgresEncodable {
    @inlinable
    static func bind(text: String) -> PostgresBind {
        PostgresBind(oid: postgresTypeOID, value: .text(text))
    }
}

extension String: PostgresEncodable {
    public static var postgresTypeOID: UInt32 { PostgresTypeOID.text }
    public var postgresBind: PostgresBind { Self.bind(text: self) }
}

extension Substring: PostgresEncodable {
    public static var postgresTypeOID: UInt32 { PostgresTypeOID.text }
    public var postgresBind: PostgresBind { Self.bind(text: String(self)) }
}

// Numbers, booleans and instants travel in binary: big-endian, as the server's `recv`
// functions read them. Nothing to format, nothing to parse.

extension Int: PostgresEncodable {
    public static var postgresTypeOID: UInt32 { PostgresTypeOID.int8 }
    public var postgresBind: PostgresBind {
        PostgresBind(oid: Self.postgresTypeOID, value: .bigEndian(UInt64(bitPattern: Int64(self)), byteCount: 8))
    }
}

extension Int64: PostgresEncodable {
    public static var postgresTypeOID: UInt32 { PostgresTypeOID.int8 }
    public var postgresBind: PostgresBind {
        PostgresBind(oid: Self.postgresTypeOID, value: .bigEndian(UInt64(bitPattern: self), byteCount: 8))
    }
}

extension Int32: PostgresEncodable {
    public static var postgresTypeOID: UInt32 { PostgresTypeOID.int4 }
    public var postgresBind: PostgresBind {
        PostgresBind(oid: Self.postgresTypeOID, value: .bigEndian(UInt64(UInt32(bitPattern: self)), byteCount: 4))
    }
}

extension Bool: PostgresEncodable {
    public static var postgresTypeOID: UInt32 { PostgresTypeOID.bool }
    public var postgresBind: PostgresBind {
        PostgresBind(oid: Self.postgresTypeOID, value: .bigEndian(self ? 1 : 0, byteCount: 1))
    }
}

extension Double: PostgresEncodable {
    public static var postgresTypeOID: UInt32 { PostgresTypeOID.float8 }
    /// The IEEE 754 bits, so every value, NaN and the infinities included, arrives exactly.
    public var postgresBind: PostgresBind {
        PostgresBind(oid: Self.postgresTypeOID, value: .bigEndian(bitPattern, byteCount: 8))
    }
}

extension Date: PostgresEncodable {
    public static var postgresTypeOID: UInt32 { PostgresTypeOID.timestamptz }
    /// Microseconds since 2000-01-01 00:00:00 UTC (a timestamptz's binary form), rounded to
    /// the nearest microsecond: a timestamptz has no finer resolution.
    public var postgresBind: PostgresBind {
        PostgresBind(oid: Self.postgresTypeOID, value: .bigEndian(UInt64(bitPattern: postgresMicroseconds), byteCount: 8))
    }

    /// Seconds from 2000-01-01 (PostgreSQL's epoch) to 2001-01-01 (Foundation's reference
    /// date): 366 days, 2000 being a leap year.
    static let postgresEpochOffset: Int64 = 31_622_400

    /// Whole seconds and the fraction apart, so the microseconds of an instant far from
    /// either epoch keep their precision.
    /// An instant too far out for an `int8` of microseconds (some 292,000 years) goes as
    /// `infinity` or `-infinity` rather than trapping.
    var postgresMicroseconds: Int64 {
        let interval = timeIntervalSinceReferenceDate
        guard interval.isFinite, abs(interval) < 9e12 else { return interval < 0 ? .min : .max }
        let whole = interval.rounded(.down)
        let micros = Int64(((interval - whole) * 1_000_000).rounded())
        return (Int64(whole) + Self.postgresEpochOffset) * 1_000_000 + micros
    }

    /// The instant of a timestamptz's binary form; nil for `infinity` and `-infinity`
    /// (`Int64.max` and `Int64.min`), which no `Date` stands for.
    init?(postgresMicroseconds micros: Int64) {
        guard micros != .max, micros != .min else { return nil }
        let (seconds, fraction) = micros.quotientAndRemainder(dividingBy: 1_000_000)
        let (whole, rest) = fraction < 0 ? (seconds - 1, fraction + 1_000_000) : (seconds, fraction)
        self.init(timeIntervalSinceReferenceDate: Double(whole - Self.postgresEpochOffset) + Double(rest) / 1_000_000)
    }
}

/// Bytes for a `bytea` column, sent in binary so nothing needs escaping.
public struct PostgresBytes: Sendable, Hashable, PostgresEncodable {
    public var bytes: [UInt8]
    public init(_ bytes: [UInt8]) { self.bytes = bytes }
    public static var postgresTypeOID: UInt32 { PostgresTypeOID.bytea }
    public var postgresBind: PostgresBind { PostgresBind(oid: Self.postgresTypeOID, value: .binary(bytes)) }
}

/// Elements that can form a one-dimensional array parameter.
public protocol PostgresArrayElement: PostgresEncodable {
    static var postgresArrayTypeOID: UInt32 { get }
    /// The element as it appears inside an array literal, before quoting.
    var postgresArrayElementText: String { get }
}

extension String: PostgresArrayElement {
    public static var postgresArrayTypeOID: UInt32 { PostgresTypeOID.textArray }
    public var postgresArrayElementText: String { self }
}

extension Int: PostgresArrayElement {
    public static var postgresArrayTypeOID: UInt32 { PostgresTypeOID.int8Array }
    public var postgresArrayElementText: String { String(self) }
}

extension Int64: PostgresArrayElement {
    public static var postgresArrayTypeOID: UInt32 { PostgresTypeOID.int8Array }
    public var postgresArrayElementText: String { String(self) }
}

extension Array: PostgresEncodable where Element: PostgresArrayElement {
    public static var postgresTypeOID: UInt32 { Element.postgresArrayTypeOID }
    /// Every element is double-quoted with `"` and `\` escaped, so commas,
    /// braces, spaces and the word NULL inside strings stay data.
    public var postgresBind: PostgresBind {
        var literal = "{"
        for (index, element) in enumerated() {
            if index > 0 { literal += "," }
            literal += "\""
            for character in element.postgresArrayElementText {
                if character == "\"" || character == "\\" { literal += "\\" }
                literal.append(character)
            }
            literal += "\""
        }
        literal += "}"
        return Self.bind(text: literal)
    }
}
