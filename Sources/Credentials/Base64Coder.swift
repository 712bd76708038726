/// Unpadded base64 in a chosen alphabet, with a strict decoder.
///
/// Written here rather than taken from Foundation because Foundation has no
/// base64url variant, and because decoding must be canonical: exactly one
/// string decodes to a given byte sequence (no padding, no whitespace, unused
/// trailing bits zero), so stored hashes and cursors cannot be varied.
struct Base64Coder: Sendable {
    private let alphabet: [UInt8]
    private let decodeTable: [UInt8]

    private static let invalid: UInt8 = 0xFF

    private init(_ alphabet: String) {
        let symbols = Array(alphabet.utf8)
        precondition(symbols.count == 64)
        self.alphabet = symbols
        var table = [UInt8](repeating: Self.invalid, count: 256)
        for (value, symbol) in symbols.enumerated() {
            table[Int(symbol)] = UInt8(value)
        }
        self.decodeTable = table
    }

    /// RFC 4648 section 4 alphabet (`+`, `/`), as in PHC-style hash strings.
    static let standard = Base64Coder("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
    /// RFC 4648 section 5 URL- and filename-safe alphabet (`-`, `_`).
    static let url = Base64Coder("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")

    func encode(_ bytes: some Collection<UInt8>) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count * 4 + 2) / 3)
        var iterator = bytes.makeIterator()
        while let first = iterator.next() {
            let second = iterator.next()
            let third = iterator.next()
            let group = UInt32(first) << 16 | UInt32(second ?? 0) << 8 | UInt32(third ?? 0)
            output.append(alphabet[Int(group >> 18 & 0x3F)])
            output.append(alphabet[Int(group >> 12 & 0x3F)])
            if second != nil { output.append(alphabet[Int(group >> 6 & 0x3F)]) }
            if third != nil { output.append(alphabet[Int(group & 0x3F)]) }
            if third == nil { break }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Returns nil for any character outside the alphabet (including `=`),
    /// an impossible length, or non-zero unused bits in the last symbol.
    func decode(_ text: some StringProtocol) -> [UInt8]? {
        let symbols = Array(text.utf8)
        guard symbols.count % 4 != 1 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(symbols.count * 3 / 4)
        var index = 0
        while index < symbols.count {
            let chunk = symbols[index..<min(index + 4, symbols.count)]
            var group: UInt32 = 0
            for symbol in chunk {
                let value = decodeTable[Int(symbol)]
                guard value != Self.invalid else { return nil }
                group = group << 6 | UInt32(value)
            }
            switch chunk.count {
            case 4:
                output.append(UInt8(group >> 16 & 0xFF))
                output.append(UInt8(group >> 8 & 0xFF))
                output.append(UInt8(group & 0xFF))
            case 3:
                guard group & 0x3 == 0 else { return nil }
                output.append(UInt8(group >> 10 & 0xFF))
                output.append(UInt8(group >> 2 & 0xFF))
            default:  // 2 symbols carry one byte
                guard group & 0xF == 0 else { return nil }
                output.append(UInt8(group >> 4 & 0xFF))
            }
            index += 4
        }
        return output
    }
}
