/// Finds a key that appears twice in one JSON object.
///
/// `JSONDecoder` keeps one of the two values without a word, while a proxy or another
/// parser in front of us may act on the other; a request that means two things is refused
/// instead. The check runs on text the decoder has already accepted (so it need not
/// validate anything), in one pass over at most the body limit's bytes, with a stack as
/// deep as the decoder allowed. Keys compare as Swift strings, exactly as the decoder's
/// dictionary compares them, escapes decoded (`"a"` and `"\u0061"` are the same key).
enum JSONDuplicateKeys {
    private struct Frame {
        /// Nil for an array.
        var keys: Set<String>?
        /// For the message: what an object's keys are prefixed with (`""`, `password.`),
        /// or what an array is called (`items[]`).
        let path: String
        var expectingKey: Bool
        var lastKey = ""
    }

    /// The path of the first repeated key (`password.current`), or nil when there is none.
    static func firstDuplicate(in text: UnsafeRawBufferPointer) -> String? {
        var stack: [Frame] = []
        var index = 0
        while index < text.count {
            switch text[index] {
            case UInt8(ascii: "\""):
                let start = index + 1
                var escaped = false
                index = start
                while text[index] != UInt8(ascii: "\"") {
                    if text[index] == UInt8(ascii: "\\") { escaped = true; index += 1 }
                    index += 1
                }
                if let top = stack.indices.last, stack[top].keys != nil, stack[top].expectingKey {
                    let key = decodeKey(UnsafeRawBufferPointer(rebasing: text[start..<index]), escaped: escaped)
                    if stack[top].keys!.insert(key).inserted == false { return stack[top].path + key }
                    stack[top].expectingKey = false
                    stack[top].lastKey = key
                }
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let base = stack.last.map { $0.keys == nil ? $0.path : $0.path + $0.lastKey } ?? ""
                if text[index] == UInt8(ascii: "{") {
                    stack.append(Frame(keys: [], path: base.isEmpty ? "" : base + ".", expectingKey: true))
                } else {
                    stack.append(Frame(keys: nil, path: base + "[]", expectingKey: false))
                }
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                stack.removeLast()
            case UInt8(ascii: ","):
                if let top = stack.indices.last { stack[top].expectingKey = true }
            default:
                break
            }
            index += 1
        }
        return nil
    }

    /// A key's text with its escapes decoded (`\uD83D\uDE00` pairs included).
    private static func decodeKey(_ raw: UnsafeRawBufferPointer, escaped: Bool) -> String {
        guard escaped else { return String(decoding: raw, as: UTF8.self) }
        var bytes: [UInt8] = []
        var units: [UInt16] = []
        var index = 0
        func flushUnits() {
            if !units.isEmpty { bytes += Array(String(decoding: units, as: UTF16.self).utf8); units = [] }
        }
        while index < raw.count {
            guard raw[index] == UInt8(ascii: "\\") else {
                flushUnits()
                bytes.append(raw[index])
                index += 1
                continue
            }
            let kind = raw[index + 1]
            index += 2
            if kind == UInt8(ascii: "u") {
                let hex = String(decoding: UnsafeRawBufferPointer(rebasing: raw[index..<index + 4]), as: UTF8.self)
                units.append(UInt16(hex, radix: 16) ?? 0xFFFD)
                index += 4
                continue
            }
            flushUnits()
            switch kind {
            case UInt8(ascii: "b"): bytes.append(0x08)
            case UInt8(ascii: "f"): bytes.append(0x0C)
            case UInt8(ascii: "n"): bytes.append(0x0A)
            case UInt8(ascii: "r"): bytes.append(0x0D)
            case UInt8(ascii: "t"): bytes.append(0x09)
            default: bytes.append(kind)  // \" \\ \/
            }
        }
        flushUnits()
        return String(decoding: bytes, as: UTF8.self)
    }
}
