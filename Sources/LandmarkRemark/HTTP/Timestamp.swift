import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// RFC 3339 in UTC with milliseconds (`2026-11-21T09:30:00.123Z`), the API's one timestamp form.
enum Timestamp {
    /// Digits are placed by hand: `String(format:)` went through CoreFoundation's
    /// format parser, two per note, and showed in the benchmark's profile.
    static func format(_ date: Date) -> String {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        var seconds = time_t(milliseconds.quotientAndRemainder(dividingBy: 1000).quotient)
        var millis = Int(milliseconds % 1000)
        if millis < 0 { millis += 1000; seconds -= 1 }
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(unsafeUninitializedCapacity: 24) { text in
            var index = 0
            func put(_ value: Int, digits: Int) {
                var value = value
                for position in stride(from: digits - 1, through: 0, by: -1) {
                    text[index + position] = UInt8(ascii: "0") + UInt8(value % 10)
                    value /= 10
                }
                index += digits
            }
            func put(_ character: Unicode.Scalar) {
                text[index] = UInt8(ascii: character)
                index += 1
            }
            put(Int(parts.tm_year) + 1900, digits: 4)
            put("-")
            put(Int(parts.tm_mon) + 1, digits: 2)
            put("-")
            put(Int(parts.tm_mday), digits: 2)
            put("T")
            put(Int(parts.tm_hour), digits: 2)
            put(":")
            put(Int(parts.tm_min), digits: 2)
            put(":")
            put(Int(parts.tm_sec), digits: 2)
            put(".")
            put(millis, digits: 3)
            put("Z")
            return index
        }
    }
}
