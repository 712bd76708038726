import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// RFC 3339 in UTC with milliseconds (`2026-11-21T09:30:00.123Z`), the API's one timestamp form.
enum Timestamp {
    static func format(_ date: Date) -> String {
        var bytes = [UInt8]()
        write(date, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the 24 bytes of the timestamp. Digits are placed by hand:
    /// `String(format:)` went through CoreFoundation's format parser, two per
    /// note, and showed in the benchmark's profile.
    static func write(_ date: Date, to bytes: inout [UInt8]) {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        var seconds = time_t(milliseconds.quotientAndRemainder(dividingBy: 1000).quotient)
        var millis = Int(milliseconds % 1000)
        if millis < 0 { millis += 1000; seconds -= 1 }
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func put(_ value: Int, digits: Int) {
            var divisor = 1
            for _ in 1..<digits { divisor *= 10 }
            var value = value
            while divisor > 0 {
                bytes.append(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: (value / divisor) % 10))
                value %= divisor
                divisor /= 10
            }
        }
        put(Int(parts.tm_year) + 1900, digits: 4)
        bytes.append(UInt8(ascii: "-"))
        put(Int(parts.tm_mon) + 1, digits: 2)
        bytes.append(UInt8(ascii: "-"))
        put(Int(parts.tm_mday), digits: 2)
        bytes.append(UInt8(ascii: "T"))
        put(Int(parts.tm_hour), digits: 2)
        bytes.append(UInt8(ascii: ":"))
        put(Int(parts.tm_min), digits: 2)
        bytes.append(UInt8(ascii: ":"))
        put(Int(parts.tm_sec), digits: 2)
        bytes.append(UInt8(ascii: "."))
        put(millis, digits: 3)
        bytes.append(UInt8(ascii: "Z"))
    }
}
