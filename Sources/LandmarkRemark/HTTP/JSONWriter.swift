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
    private(set) var buffer: ByteBuffer
    /// Whether the next key or array element is the first of its container (no comma).
    private var first = true

    init(capacity: Int = 1024) {
        buffer = ByteBufferAllocator().buffer(capacity: capacity)
    }

    mutating func object(_ members: (inout JSONWriter) -> Void) {
        separate()
        buffer.writeInteger(UInt8(ascii: "{"))
        first = true
        members(&self)
        buffer.writeInteger(UInt8(ascii: "}"))
        first = false
    }

    mutating func array<Elements: Sequence>(_ elements: Elements) where Elements.Element: JSONWritable {
        separate()
        buffer.writeInteger(UInt8(ascii: "["))
        first = true
        for element in elements { element.write(to: &self) }
        buffer.writeInteger(UInt8(ascii: "]"))
        first = false
    }

    /// Writes `"name":`; the value written next needs no comma.
    mutating func key(_ name: StaticString) {
        separate()
        buffer.writeInteger(UInt8(ascii: "\""))
        buffer.writeStaticString(name)
        buffer.writeInteger(UInt8(ascii: "\""))
        buffer.writeInteger(UInt8(ascii: ":"))
        first = true
    }

    mutating func string(_ value: String) {
        separate()
        writeEscaped(value)
    }

    mutating func string(_ value: String?) {
        if let value { string(value) } else { null() }
    }

    mutating func integer(_ value: Int64) {
        separate()
        buffer.writeString(String(value))
    }

    /// The shortest form that reads back as the same `Double`, without a trailing
    /// `.0` (as `JSONEncoder` writes it); JSON has no NaN or infinity, so those are null.
    mutating func number(_ value: Double) {
        guard value.isFinite else { return null() }
        separate()
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        buffer.writeString(text)
    }

    mutating func bool(_ value: Bool) {
        separate()
        buffer.writeStaticString(value ? "true" : "false")
    }

    mutating func null() {
        separate()
        buffer.writeStaticString("null")
    }

    /// A value that writes itself, e.g. a nested object.
    mutating func value(_ value: some JSONWritable) {
        value.write(to: &self)
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }

    private mutating func separate() {
        if !first { buffer.writeInteger(UInt8(ascii: ",")) }
        first = false
    }

    private mutating func writeEscaped(_ value: String) {
        buffer.writeInteger(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { bytes in
            var clean = 0  // start of the run of bytes that need no escaping
            for index in bytes.indices {
                let byte = bytes[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                buffer.writeBytes(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[clean..<index])))
                clean = index + 1
                switch byte {
                case UInt8(ascii: "\""): buffer.writeStaticString("\\\"")
                case UInt8(ascii: "\\"): buffer.writeStaticString("\\\\")
                case UInt8(ascii: "\n"): buffer.writeStaticString("\\n")
                case UInt8(ascii: "\r"): buffer.writeStaticString("\\r")
                case UInt8(ascii: "\t"): buffer.writeStaticString("\\t")
                case 0x08: buffer.writeStaticString("\\b")
                case 0x0C: buffer.writeStaticString("\\f")
                default:
                    buffer.writeStaticString("\\u00")
                    buffer.writeInteger(Self.hexDigit(byte >> 4))
                    buffer.writeInteger(Self.hexDigit(byte & 0x0F))
                }
            }
            buffer.writeBytes(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[clean...])))
        }
        buffer.writeInteger(UInt8(ascii: "\""))
    }
}

extension JSONWritable {
    /// The value as one JSON document.
    var jsonBuffer: ByteBuffer {
        var json = JSONWriter()
        write(to: &json)
        return json.buffer
    }
}
