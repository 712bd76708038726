import Foundation

/// One field of a result row: its type, its format, and its bytes, or nil for NULL.
///
/// `query` asks for every result in binary (libpq `resultFormat` 1): integers and floats
/// big-endian, `bool` one byte, `timestamptz` an `int8` of microseconds since 2000-01-01
/// UTC, `uuid` 16 bytes, `jsonb` a version byte then its text, `numeric` base-10000 digits,
/// arrays a header then their elements; text types are their UTF-8 bytes either way. The
/// simple protocol (`execute(unsafeSQL:)`) answers in text, which only `String` reads.
/// A decoder refuses a type or format it does not know (nil, which the row turns into an
/// error naming the column) rather than misread it.
public struct PostgresCell {
    public enum Format: Sendable, Equatable, CustomStringConvertible {
        case text, binary
        public var description: String { self == .text ? "text" : "binary" }
    }

    public let oid: UInt32
    public let format: Format
    public let bytes: UnsafeRawBufferPointer?

    @usableFromInline init(oid: UInt32, format: Format, bytes: UnsafeRawBufferPointer?) {
        self.oid = oid
        self.format = format
        self.bytes = bytes
    }

    /// The text of a non-NULL cell.
    var string: String? { bytes.map { String(decoding: $0, as: UTF8.self) } }

    /// The bytes of a non-NULL binary cell of exactly `count` bytes, read as a big-endian
    /// unsigned integer.
    func bigEndian(_ count: Int) -> UInt64? {
        guard format == .binary, let bytes, bytes.count == count else { return nil }
        var value: UInt64 = 0
        for byte in bytes { value = value << 8 | UInt64(byte) }
        return value
    }
}

/// A Swift type a result column can be decoded into.
public protocol PostgresDecodable {
    /// Decodes a cell; return nil when the type, the format or the value does not fit,
    /// and the row turns that into an error naming the column.
    static func decode(_ cell: PostgresCell) -> Self?
    /// Whether a NULL is acceptable (only for Optional).
    static var acceptsNull: Bool { get }
}

extension PostgresDecodable {
    public static var acceptsNull: Bool { false }
}

extension Optional: PostgresDecodable where Wrapped: PostgresDecodable {
    public static var acceptsNull: Bool { true }
    public static func decode(_ cell: PostgresCell) -> Self? {
        guard cell.bytes != nil else { return .some(nil) }
        guard let value = Wrapped.decode(cell) else { return nil }
        return .some(value)
    }
}

// Type checks are switches, not `[…].contains`: an array literal per cell was an
// allocation per cell.
private func decodeInteger(_ cell: PostgresCell) -> Int64? {
    switch cell.oid {
    case PostgresTypeOID.int8: return cell.bigEndian(8).map { Int64(bitPattern: $0) }
    case PostgresTypeOID.int4: return cell.bigEndian(4).map { Int64(Int32(bitPattern: UInt32($0))) }
    case PostgresTypeOID.int2: return cell.bigEndian(2).map { Int64(Int16(bitPattern: UInt16($0))) }
    case PostgresTypeOID.oid: return cell.bigEndian(4).map { Int64($0) }
    default: return nil
    }
}

extension Int64: PostgresDecodable {
    public static func decode(_ cell: PostgresCell) -> Int64? { decodeInteger(cell) }
}

extension Int: PostgresDecodable {
    public static func decode(_ cell: PostgresCell) -> Int? { decodeInteger(cell).flatMap(Int.init(exactly:)) }
}

extension Int32: PostgresDecodable {
    public static func decode(_ cell: PostgresCell) -> Int32? { decodeInteger(cell).flatMap(Int32.init(exactly:)) }
}

extension Double: PostgresDecodable {
    public static func decode(_ cell: PostgresCell) -> Double? {
        switch cell.oid {
        case PostgresTypeOID.float8:
            return cell.bigEndian(8).map { Double(bitPattern: $0) }
        case PostgresTypeOID.float4:
            // As PostgreSQL prints a real (the shortest text that reads back the same), so
            // 0.1::real decodes as 0.1, not as 0.100000001490116: what text results gave.
            return cell.bigEndian(4).flatMap { Double(Float(bitPattern: UInt32($0)).description) }
        case PostgresTypeOID.numeric:
            return decodeNumeric(cell)
        default:
            return nil
        }
    }

    /// `numeric`'s binary form: digit count, weight (of the first digit, in powers of
    /// 10000), sign, display scale, then the base-10000 digits. Rendered as decimal digits
    /// with an exponent and read by `strtod`, which rounds correctly (summing powers of
    /// 10000 in floating point would not).
    private static func decodeNumeric(_ cell: PostgresCell) -> Double? {
        guard cell.format == .binary, let bytes = cell.bytes, bytes.count >= 8 else { return nil }
        func word(_ index: Int) -> UInt16 { UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1]) }
        let count = Int(word(0))
        let weight = Int(Int16(bitPattern: word(2)))
        let sign = word(4)
        guard bytes.count == 8 + 2 * count else { return nil }
        switch sign {
        case 0xC000: return .nan
        case 0xD000: return .infinity
        case 0xF000: return -.infinity
        case 0x0000, 0x4000: break
        default: return nil
        }
        guard count > 0 else { return sign == 0x4000 ? -0.0 : 0 }
        var text = [CChar]()
        text.reserveCapacity(count * 4 + 12)
        if sign == 0x4000 { text.append(CChar(UInt8(ascii: "-"))) }
        for index in 0..<count {
            let digit = word(8 + 2 * index)
            guard digit < 10_000 else { return nil }
            for power in [1000, 100, 10, 1] as [UInt16] {
                text.append(CChar(48 + UInt8(digit / power % 10)))
            }
        }
        text.append(CChar(UInt8(ascii: "e")))
        text.append(contentsOf: String((weight - count + 1) * 4).utf8.map { CChar(bitPattern: $0) })
        text.append(0)
        return text.withUnsafeBufferPointer { buffer in
            var end: UnsafeMutablePointer<CChar>?
            let value = strtod(buffer.baseAddress!, &end)
            return end == UnsafeMutablePointer(mutating: buffer.baseAddress! + buffer.count - 1) ? value : nil
        }
    }
}

extension Bool: PostgresDecodable {
    public static func decode(_ cell: PostgresCell) -> Bool? {
        guard cell.oid == PostgresTypeOID.bool, let byte = cell.bigEndian(1) else { return nil }
        switch byte {
        case 1: return true
        case 0: return false
        default: return nil
        }
    }
}

extension String: PostgresDecodable {
    /// Text types, whose binary form is their text; `jsonb` after its version byte; `uuid`
    /// in its usual 8-4-4-4-12 hex form. In text format (the simple protocol) the text types only.
    public static func decode(_ cell: PostgresCell) -> String? {
        switch cell.oid {
        case PostgresTypeOID.text, PostgresTypeOID.varchar, PostgresTypeOID.bpchar, PostgresTypeOID.name,
            PostgresTypeOID.json, PostgresTypeOID.unknown:
            return cell.string
        case PostgresTypeOID.jsonb:
            guard cell.format == .binary else { return cell.string }
            // Version 1 is the only one there is; another would be a layout we cannot read.
            guard let bytes = cell.bytes, bytes.first == 1 else { return nil }
            return String(decoding: UnsafeRawBufferPointer(rebasing: bytes.dropFirst()), as: UTF8.self)
        case PostgresTypeOID.uuid:
            guard cell.format == .binary else { return cell.string }
            guard let bytes = cell.bytes, bytes.count == 16 else { return nil }
            let hex = Array("0123456789abcdef".utf8)
            var text = [UInt8]()
            text.reserveCapacity(36)
            for (index, byte) in bytes.enumerated() {
                if index == 4 || index == 6 || index == 8 || index == 10 { text.append(UInt8(ascii: "-")) }
                text.append(hex[Int(byte >> 4)])
                text.append(hex[Int(byte & 0x0F)])
            }
            return String(decoding: text, as: UTF8.self)
        default:
            return nil
        }
    }
}

extension Date: PostgresDecodable {
    /// `timestamptz` and `timestamp` (taken as UTC): microseconds since 2000-01-01.
    /// `infinity` and `-infinity` are refused: no `Date` stands for them.
    public static func decode(_ cell: PostgresCell) -> Date? {
        guard cell.oid == PostgresTypeOID.timestamptz || cell.oid == PostgresTypeOID.timestamp,
            let bits = cell.bigEndian(8)
        else { return nil }
        return Date(postgresMicroseconds: Int64(bitPattern: bits))
    }
}

extension PostgresBytes: PostgresDecodable {
    /// `bytea` in binary is the bytes themselves.
    public static func decode(_ cell: PostgresCell) -> PostgresBytes? {
        guard cell.oid == PostgresTypeOID.bytea, cell.format == .binary, let bytes = cell.bytes else { return nil }
        return PostgresBytes(Array(bytes))
    }
}

extension Array: PostgresDecodable where Element: PostgresDecodable & PostgresArrayElement {
    /// One-dimensional arrays of text or integers, in binary: dimensions, a has-nulls flag,
    /// the element type, each dimension's length and lower bound, then each element's length
    /// and bytes. NULL elements are refused: our queries aggregate with FILTER or COALESCE so
    /// they never produce them.
    public static func decode(_ cell: PostgresCell) -> [Element]? {
        switch cell.oid {
        case PostgresTypeOID.textArray, PostgresTypeOID.varcharArray, PostgresTypeOID.int8Array, PostgresTypeOID.int4Array: break
        default: return nil
        }
        guard cell.format == .binary, let bytes = cell.bytes, bytes.count >= 12 else { return nil }
        var offset = 0
        func int32() -> Int32? {
            guard offset + 4 <= bytes.count else { return nil }
            defer { offset += 4 }
            return Int32(bitPattern: UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16
                | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3]))
        }
        guard let dimensions = int32(), let _ = int32(), let elementType = int32() else { return nil }
        let elementOID = UInt32(bitPattern: elementType)
        if dimensions == 0 { return offset == bytes.count ? [] : nil }
        guard dimensions == 1, let length = int32(), let _ = int32(), length >= 0 else { return nil }
        var result = [Element]()
        result.reserveCapacity(Int(length))
        for _ in 0..<length {
            guard let size = int32(), size >= 0, offset + Int(size) <= bytes.count else { return nil }
            let element = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + Int(size))])
            offset += Int(size)
            guard let decoded = Element.decode(PostgresCell(oid: elementOID, format: .binary, bytes: element)) else { return nil }
            result.append(decoded)
        }
        return offset == bytes.count ? result : nil
    }
}
