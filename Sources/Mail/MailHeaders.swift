import Foundation

/// What curl does not do for a message's headers: RFC 2047 encoded words for text outside
/// ASCII (curl sends a UTF-8 Subject raw, which many clients show as mojibake), RFC 5322 dates,
/// folding, and refusing line breaks that would let a value start a header of its own.
enum MailHeaders {
    /// An unstructured value (Subject): as is when it is plain printable ASCII, else encoded words.
    static func unstructured(_ value: String) -> String {
        let clean = singleLine(value)
        if clean.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7F }), !clean.contains("=?") { return clean }
        return encodedWords(clean).joined(separator: "\r\n ")
    }

    /// A display name: a quoted string when ASCII, else encoded words (which may not be quoted).
    static func phrase(_ value: String) -> String {
        let clean = singleLine(value)
        if clean.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7F }), !clean.contains("=?") {
            return "\"" + clean.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
        return encodedWords(clean).joined(separator: " ")
    }

    /// `Name: value`, folded before 78 columns where the value already breaks (encoded words
    /// are joined by CRLF SP, which curl passes through inside one header entry).
    static func folded(name: String, value: String) -> String { "\(name): \(value)" }

    /// `=?UTF-8?B?…?=` words of at most 75 characters each (RFC 2047 §2), split between
    /// characters, never inside one.
    static func encodedWords(_ value: String) -> [String] {
        // 75 - len("=?UTF-8?B?") - len("?=") = 63 base64 characters: at most 45 bytes of UTF-8.
        var words: [String] = [], chunk: [UInt8] = []
        for character in value {
            let bytes = Array(String(character).utf8)
            if chunk.count + bytes.count > 45, !chunk.isEmpty {
                words.append("=?UTF-8?B?" + Data(chunk).base64EncodedString() + "?=")
                chunk = []
            }
            chunk += bytes
        }
        if !chunk.isEmpty || words.isEmpty { words.append("=?UTF-8?B?" + Data(chunk).base64EncodedString() + "?=") }
        return words
    }

    /// RFC 5322 §3.3 in UTC: `Fri, 27 Nov 2026 16:38:38 +0000`.
    static func date(_ date: Date) -> String {
        let calendar = Calendar(identifier: .gregorian)
        let parts = calendar.dateComponents(in: TimeZone(identifier: "UTC")!, from: date)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ n: Int?) -> String { let n = n ?? 0; return n < 10 ? "0\(n)" : "\(n)" }
        return "\(days[(parts.weekday ?? 1) - 1]), \(two(parts.day)) \(months[(parts.month ?? 1) - 1]) \(parts.year ?? 1970) "
            + "\(two(parts.hour)):\(two(parts.minute)):\(two(parts.second)) +0000"
    }

    /// Line breaks and other controls become spaces: a header value cannot start another header.
    static func singleLine(_ value: String) -> String {
        String(String.UnicodeScalarView(value.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? " " : $0 }))
    }
}
