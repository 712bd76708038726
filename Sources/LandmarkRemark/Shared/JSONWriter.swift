import Foundation
import NIOCore

/// A type the hot responses (note and place lists, single notes and places) write
/// straight into bytes. `JSONEncoder` costs about as much CPU per note as the
/// database spends finding it (dynamic casts, key conversion, key sorting, a
/// closure per date); the benchmark's profile showed it, so these types write
/// their own JSON, with the same keys in the same sorted order.
protocol JSONWritable {
    func write(to json: inout JSONWriter)
}

/// Appends JSON tokens to a buffer, placing the commas itself.
///
/// Keys are `StaticString`s written as is, so they must be plain snake_case
/// ASCII; string values are escaped as RFC 8259 requires (quote, backslash,
/// control characters), and everything else is left as UTF-8, as `JSONEncoder`
/// does with `.withoutEscapingSlashes`.
struct JSONWriter {
    /// An array rather than a `ByteBuffer`: appending a byte to an array is a few
    /// instructions, while each `ByteBuffer` write checks capacity and uniqueness
    /// (measured: a third of the writer's time went there).
    private(set) var bytes: [UInt8] = []
    /// Whether the next key or array element is the first of its container (no comma).
    private var first = true

    init(capacity: Int = 1024) {
        bytes.reserveCapacity(capacity)
    }

    mutating func object(_ members: (inout JSONWriter) -> Void) {
        separate()
        bytes.append(UInt8(ascii: "{"))
        first = true
        members(&self)
        bytes.append(UInt8(ascii: "}"))
        first = false
    }

    mutating func array<Elements: Sequence>(_ elements: Elements) where Elements.Element: JSONWritable {
        separate()
        bytes.append(UInt8(ascii: "["))
        first = true
        for element in elements { element.write(to: &self) }
        bytes.append(UInt8(ascii: "]"))
        first = false
    }

    /// Writes `"name":`; the value written next needs no comma.
    mutating func key(_ name: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        write(name)
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        first = true
    }

    mutating func string(_ value: String) {
        separate()
        writeEscaped(value)
    }

    mutating func string(_ value: String?) {
        if let value { string(value) } else { null() }
    }

    /// An RFC 3339 timestamp string (`Timestamp`), written without an intermediate `String`.
    mutating func timestamp(_ date: Date) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        Timestamp.write(date, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    mutating func integer(_ value: Int64) {
        separate()
        writeDigits(value)
    }

    /// An id: digits in a JSON string (`"42"`), as the API sends ids, without a `String` per id.
    mutating func quotedInteger(_ value: Int64) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        writeDigits(value)
        bytes.append(UInt8(ascii: "\""))
    }

    mutating func quotedInteger(_ value: Int64?) {
        if let value { quotedInteger(value) } else { null() }
    }

    /// The shortest form that reads back as the same `Double`, without a trailing
    /// `.0` (as `JSONEncoder` writes it); JSON has no NaN or infinity, so those are null.
    mutating func number(_ value: Double) {
        guard value.isFinite else { return null() }
        separate()
        var text = value.description
        text.withUTF8 { utf8 in
            let count = utf8.count
            let wholeNumber = count > 2 && utf8[count - 2] == UInt8(ascii: ".") && utf8[count - 1] == UInt8(ascii: "0")
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[..<(wholeNumber ? count - 2 : count)]))
        }
    }

    mutating func bool(_ value: Bool) {
        separate()
        write(value ? "true" : "false")
    }

    mutating func null() {
        separate()
        write("null")
    }

    private mutating func write(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Decimal digits of `value`, most significant first, built on the stack.
    private mutating func writeDigits(_ value: Int64) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var magnitude = value.magnitude
            var start = 20
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 { bytes.append(UInt8(ascii: "-")) }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }

    private mutating func separate() {
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
    }

    private mutating func writeEscaped(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { utf8 in
            var clean = 0  // start of the run of bytes that need no escaping
            for index in utf8.indices {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                self.bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[clean..<index]))
                clean = index + 1
                switch byte {
                case UInt8(ascii: "\""): write("\\\"")
                case UInt8(ascii: "\\"): write("\\\\")
                case UInt8(ascii: "\n"): write("\\n")
                case UInt8(ascii: "\r"): write("\\r")
                case UInt8(ascii: "\t"): write("\\t")
                case 0x08: write("\\b")
                case 0x0C: write("\\f")
                default:
                    write("\\u00")
                    bytes.append(Self.hexDigit(byte >> 4))
                    bytes.append(Self.hexDigit(byte & 0x0F))
                }
            }
            self.bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[clean...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }
}

extension JSONWritable {
    /// The value as one JSON document.
    var jsonBuffer: ByteBuffer { ByteBuffer(bytes: jsonBytes) }

    /// The same as bytes, for values kept apart from a response (event data, idempotent replays).
    var jsonBytes: [UInt8] {
        var json = JSONWriter()
        write(to: &json)
        return json.bytes
    }
}

/// The contract's enumerations are written as their raw strings (in arrays, say).
extension JSONWritable where Self: RawRepresentable, RawValue == String {
    func write(to json: inout JSONWriter) {
        json.string(rawValue)
    }
}

/// Arrays of strings (a tenant's sign-in providers).
extension String: JSONWritable {
    func write(to json: inout JSONWriter) {
        json.string(self)
    }
}
