import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Text form of `timestamptz` as sessions of this layer see it (`DateStyle=ISO`,
/// `TimeZone=UTC`, set at connect): `2026-11-21 09:30:00.123456+00`.
/// Hand-written because Foundation's formatters are slow and allocate per call.
enum PostgresTimestamp {
    static func format(_ date: Date) -> String {
        let interval = date.timeIntervalSince1970
        var seconds = Int(interval.rounded(.down))
        var micros = Int(((interval - Double(seconds)) * 1_000_000).rounded())
        if micros >= 1_000_000 { seconds += 1; micros -= 1_000_000 }
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        return String(
            format: "%04d-%02d-%02d %02d:%02d:%02d.%06d+00",
            Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
            Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), micros)
    }

    /// Parses `YYYY-MM-DD HH:MM:SS[.ffffff][+HH[:MM]]`; `infinity` is refused.
    static func parse(_ bytes: UnsafeRawBufferPointer) -> Date? {
        var index = 0
        func number(_ width: Int) -> Int? {
            guard index + width <= bytes.count else { return nil }
            var value = 0
            for offset in 0..<width {
                let byte = bytes[index + offset]
                guard byte >= 48, byte <= 57 else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            index += width
            return value
        }
        func expect(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect(45), let month = number(2), expect(45), let day = number(2),
            expect(32), let hour = number(2), expect(58), let minute = number(2), expect(58),
            let second = number(2)
        else { return nil }
        var fraction = 0.0
        if index < bytes.count, bytes[index] == 46 {
            index += 1
            var scale = 0.1
            while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 {
                fraction += Double(bytes[index] - 48) * scale
                scale /= 10
                index += 1
            }
        }
        var offsetSeconds = 0
        if index < bytes.count {
            let sign = bytes[index]
            guard sign == 43 || sign == 45 else { return nil }
            index += 1
            guard let offsetHours = number(2) else { return nil }
            var offsetMinutes = 0
            if expect(58), let minutes = number(2) { offsetMinutes = minutes }
            offsetSeconds = (offsetHours * 3600 + offsetMinutes * 60) * (sign == 45 ? -1 : 1)
        }
        guard (1...12).contains(month), (1...31).contains(day) else { return nil }
        let epoch = daysFromCivil(year: year, month: month, day: day) * 86400 + hour * 3600 + minute * 60 + second
        return Date(timeIntervalSince1970: Double(epoch - offsetSeconds) + fraction)
    }

    /// Days from 1970-01-01 to a proleptic Gregorian date, by arithmetic rather than
    /// `timegm` (which normalises a `tm` and showed in the list routes' profile):
    /// Howard Hinnant's `days_from_civil` (http://howardhinnant.github.io/date_algorithms.html).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let year = month <= 2 ? year - 1 : year
        let era = (year >= 0 ? year : year - 399) / 400
        let yearOfEra = year - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
