import Foundation

/// A strict reader of a URL query string: every problem is `400 malformed_request`
/// naming the parameter, and parameters nobody read are refused, so a typo such
/// as `radius=1000` surfaces instead of silently returning the whole globe.
struct QueryParameters {
    private var values: [String: String] = [:]
    private var read: Set<String> = []

    /// Splits `a=1&b=two%20words`; `+` is a space, as HTML forms and `URLSearchParams` send it.
    init(query: String?) throws {
        guard let query, !query.isEmpty else { return }
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = Self.decode(parts[0]), !name.isEmpty else {
                throw AppError.malformed("the query string is not valid percent-encoded UTF-8")
            }
            guard let value = Self.decode(parts.count == 2 ? parts[1] : "") else {
                throw AppError.malformed("\(Self.printable(name)) is not valid percent-encoded UTF-8")
            }
            guard values[name] == nil else {
                throw AppError.malformed("\(Self.printable(name)) is given more than once")
            }
            values[name] = value
        }
    }

    /// Percent-decoding by hand (Foundation's showed in the profile of every list
    /// request): nil for a broken escape or bytes that are not UTF-8.
    private static func decode(_ text: Substring) -> String? {
        var bytes = [UInt8]()
        bytes.reserveCapacity(text.utf8.count)
        var input = text.utf8.makeIterator()
        while let byte = input.next() {
            switch byte {
            case UInt8(ascii: "+"):
                bytes.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard let high = input.next().flatMap(hexValue), let low = input.next().flatMap(hexValue) else { return nil }
                bytes.append(high << 4 | low)
            default:
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Names are echoed in error details; keep them short and plain.
    private static func printable(_ name: String) -> String {
        let plain = name.unicodeScalars.allSatisfy { $0.isASCII && $0.value > 0x20 && $0.value < 0x7F }
        return plain && name.count <= 40 ? name : "a query parameter"
    }

    /// The raw value of `name`, if given, and marks it as understood.
    mutating func string(_ name: String) -> String? {
        read.insert(name)
        return values[name]
    }

    /// Whether `name` was given (without marking it read).
    func contains(_ name: String) -> Bool { values[name] != nil }

    /// An integer in `range`.
    mutating func integer(_ name: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let text = string(name) else { return nil }
        guard text.utf8.count <= 10, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let value = Int(text),
            range.contains(value)
        else {
            throw AppError.malformed("\(name) must be an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    /// Refuses any parameter that no `string(_:)` call asked for.
    func finish() throws {
        if let unknown = values.keys.sorted().first(where: { !read.contains($0) }) {
            throw AppError.malformed("\(Self.printable(unknown)) is not a known query parameter here")
        }
    }

    /// Parses a plain decimal number (`-33.86`, `1e3`), refusing `inf`, `nan` and hex floats,
    /// which `Double.init` would accept.
    static func number(_ text: some StringProtocol) -> Double? {
        let allowed = Set("0123456789+-.eE".utf8)
        guard !text.isEmpty, text.utf8.count <= 32, text.utf8.allSatisfy(allowed.contains),
            let value = Double(String(text)), value.isFinite
        else { return nil }
        return value
    }
}
