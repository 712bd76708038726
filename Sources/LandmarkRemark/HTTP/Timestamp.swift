import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// RFC 3339 in UTC with milliseconds (`2026-11-21T09:30:00.123Z`), the API's one timestamp form.
enum Timestamp {
    static func format(_ date: Date) -> String {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        var seconds = time_t(milliseconds.quotientAndRemainder(dividingBy: 1000).quotient)
        var millis = Int(milliseconds % 1000)
        if millis < 0 { millis += 1000; seconds -= 1 }
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
            Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
            Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), millis)
    }
}
