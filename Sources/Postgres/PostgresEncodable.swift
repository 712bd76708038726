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

extension Int: PostgresEncodable {
    public static var postgresTypeOID: UInt32 { PostgresTypeOID.int8 }
    public var postgresBind: PostgresBind { Self.bind(text: String(self)) }
}

extension Int64: PostgresEncodable {
    public static var postgresTypeOID: UInt32 { PostgresTypeOID.int8 }
    public var postgresBind: PostgresBind { Self.bind(text: String(self)) }
}

extension Int32: PostgresEncodable {
    public static var postgresTypeOID: UInt32 { PostgresTypeOID.int4 }
    public var postgresBind: PostgresBind { Self.bind(text: String(self)) }
}

extension Bool: PostgresEncodable {
    public static var postgresTypeOID: UInt32 { PostgresTypeOID.bool }
    public var postgresBind: PostgresBind { Self.bind(text: self ? "t" : "f") }
}

extension Double: PostgresEncodable {
    public static var postgresTypeOID: UInt32 { PostgresTypeOID.float8 }
    /// Swift's `description` is the shortest text that reads back to the same
    /// double; the special values use PostgreSQL's spelling so they round-trip.
    public var postgresBind: PostgresBind {
        if isNaN { return Self.bind(text: "NaN") }
        if isInfinite { return Self.bind(text: self < 0 ? "-Infinity" : "Infinity") }
        return Self.bind(text: description)
    }
}

extension Date: PostgresEncodable {
    public static var postgresTypeOID: UInt32 { PostgresTypeOID.timestamptz }
    public var postgresBind: PostgresBind { Self.bind(text: PostgresTimestamp.format(self)) }
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
