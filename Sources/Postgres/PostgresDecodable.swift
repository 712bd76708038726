import Foundation

/// One field of a result row: its type and its text-format bytes, or nil for NULL.
public struct PostgresCell {
    public let oid: UInt32
    public let bytes: UnsafeRawBufferPointer?

    @usableFromInline init(oid: UInt32, bytes: UnsafeRawBufferPointer?) {
        self.oid = oid
        self.bytes = bytes
    }

    /// The text of a non-NULL cell.
    var string: String? { bytes.map { String(decoding: $0, as: UTF8.self) } }
}

/// A Swift type a result column can be decoded into.
public protocol PostgresDecodable {
    /// Decodes a cell; return nil when the type or the text does not fit,
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
private func parseInteger(_ cell: PostgresCell) -> Int64? {
    switch cell.oid {
    case PostgresTypeOID.int8, PostgresTypeOID.int4, PostgresTypeOID.int2, PostgresTypeOID.oid:
        return cell.string.flatMap { Int64($0) }
    default:
        return nil
    }
}

extension Int64: PostgresDecodable {
    public static func decode(_ cell: PostgresCell) -> Int64? { parseInteger(cell) }
}

extension Int: PostgresDecodable {
    public static func decode(_ cell: PostgresCell) -> Int? { parseInteger(cell).map(Int.init) }
}

extension Int32: PostgresDecodable {
    public static func decode(_ cell: PostgresCell) -> Int32? { parseInteger(cell).flatMap(Int32.init(exactly:)) }
}

extension Double: PostgresDecodable {
    public static func decode(_ cell: PostgresCell) -> Double? {
        switch cell.oid {
        case PostgresTypeOID.float8, PostgresTypeOID.float4, PostgresTypeOID.numeric: break
        default: return nil
        }
        guard let bytes = cell.bytes, !bytes.isEmpty else { return nil }
        // strtod on a NUL-terminated stack copy: `Double(String)` made a String per
        // cell first (a heap allocation for most coordinates). `strtod` reads
        // PostgreSQL's `NaN`, `Infinity` and `-Infinity` too; the C locale is the
        // only one this process runs in (it never calls setlocale).
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: bytes.count + 1) { text in
            for index in 0..<bytes.count { text[index] = CChar(bitPattern: bytes[index]) }
            text[bytes.count] = 0
            var end: UnsafeMutablePointer<CChar>?
            let value = strtod(text.baseAddress!, &end)
            return end == text.baseAddress! + bytes.count ? value : nil
        }
    }
}

extension Bool: PostgresDecodable {
    public static func decode(_ cell: PostgresCell) -> Bool? {
        guard cell.oid == PostgresTypeOID.bool, let bytes = cell.bytes, bytes.count == 1 else { return nil }
        switch bytes[0] {
        case UInt8(ascii: "t"): return true
        case UInt8(ascii: "f"): return false
        default: return nil
        }
    }
}

extension String: PostgresDecodable {
    public static func decode(_ cell: PostgresCell) -> String? {
        switch cell.oid {
        case PostgresTypeOID.text, PostgresTypeOID.varchar, PostgresTypeOID.bpchar, PostgresTypeOID.name,
            PostgresTypeOID.json, PostgresTypeOID.jsonb, PostgresTypeOID.unknown, PostgresTypeOID.uuid:
            return cell.string
        default:
            return nil
        }
    }
}

extension Date: PostgresDecodable {
    public static func decode(_ cell: PostgresCell) -> Date? {
        guard cell.oid == PostgresTypeOID.timestamptz || cell.oid == PostgresTypeOID.timestamp,
            let bytes = cell.bytes
        else { return nil }
        return PostgresTimestamp.parse(bytes)
    }
}

extension PostgresBytes: PostgresDecodable {
    /// `bytea` in text format is `\x` followed by hex digits.
    public static func decode(_ cell: PostgresCell) -> PostgresBytes? {
        guard cell.oid == PostgresTypeOID.bytea, let bytes = cell.bytes, bytes.count >= 2, bytes.count % 2 == 0,
            bytes[0] == UInt8(ascii: "\\"), bytes[1] == UInt8(ascii: "x")
        else { return nil }
        func nibble(_ byte: UInt8) -> UInt8? {
            switch byte {
            case 48...57: return byte - 48
            case 97...102: return byte - 87
            case 65...70: return byte - 55
            default: return nil
            }
        }
        var result = [UInt8]()
        result.reserveCapacity((bytes.count - 2) / 2)
        var index = 2
        while index < bytes.count {
            guard let high = nibble(bytes[index]), let low = nibble(bytes[index + 1]) else { return nil }
            result.append(high << 4 | low)
            index += 2
        }
        return PostgresBytes(result)
    }
}

extension Array: PostgresDecodable where Element: PostgresDecodable & PostgresArrayElement {
    /// One-dimensional arrays of text or integers. NULL elements are refused:
    /// our queries aggregate with FILTER or COALESCE so they never produce them.
    public static func decode(_ cell: PostgresCell) -> [Element]? {
        let elementOID: UInt32
        switch cell.oid {
        case PostgresTypeOID.textArray, PostgresTypeOID.varcharArray: elementOID = PostgresTypeOID.text
        case PostgresTypeOID.int8Array: elementOID = PostgresTypeOID.int8
        case PostgresTypeOID.int4Array: elementOID = PostgresTypeOID.int4
        default: return nil
        }
        guard let text = cell.string, let items = PostgresArrayLiteral.parse(text) else { return nil }
        var result = [Element]()
        result.reserveCapacity(items.count)
        for item in items {
            guard let item else { return nil }
            let utf8 = [UInt8](item.utf8)
            let decoded = utf8.withUnsafeBytes { Element.decode(PostgresCell(oid: elementOID, bytes: $0)) }
            guard let decoded else { return nil }
            result.append(decoded)
        }
        return result
    }
}

/// Parser for the text form of a one-dimensional array: `{a,"b c",NULL}`.
enum PostgresArrayLiteral {
    static func parse(_ text: String) -> [String?]? {
        var characters = text.makeIterator()
        guard characters.next() == "{" else { return nil }
        var items: [String?] = []
        var current = ""
        var quoted = false
        var wasQuoted = false
        var afterItem = false
        while let character = characters.next() {
            if quoted {
                switch character {
                case "\\":
                    guard let escaped = characters.next() else { return nil }
                    current.append(escaped)
                case "\"": quoted = false
                default: current.append(character)
                }
                continue
            }
            switch character {
            case "\"":
                quoted = true
                wasQuoted = true
                afterItem = true
            case ",", "}":
                if afterItem || !current.isEmpty {
                    items.append(!wasQuoted && current == "NULL" ? nil : current)
                }
                current = ""
                wasQuoted = false
                afterItem = false
                if character == "}" { return characters.next() == nil ? items : nil }
            default:
                current.append(character)
                afterItem = true
            }
        }
        return nil
    }
}
