import Foundation

/// RFC 3339 in UTC with milliseconds (`2026-11-21T09:30:00.123Z`), the API's one timestamp form.
enum Timestamp {
    /// An RFC 3339 time with a zone (`Z` or an offset), with or without fractional seconds.
    static func parse(_ text: String) -> Date? {
        guard text.utf8.count <= 40 else { return nil }
        return (try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
            ?? (try? Date(text, strategy: .iso8601))
    }

    static func format(_ date: Date) -> String {
        var bytes = [UInt8]()
        write(date, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the 24 bytes of the timestamp, for years 0 to 9999.
    ///
    /// Written by hand into a stack buffer and appended once: `String(format:)` went
    /// through CoreFoundation's format parser, then `gmtime_r` (time zone lock and
    /// all) and a byte-by-byte append were still a fifth of writing a note, two
    /// timestamps per note (bench/results/2026-11-23-nonblocking.md).
    static func write(_ date: Date, to bytes: inout [UInt8]) {
        // To the microsecond first (what PostgreSQL keeps), then down to the millisecond: a
        // stored .123000 reads back as a Double a hair under it, which floored alone wrote .122.
        let microseconds = Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
        let milliseconds = microseconds >= 0 ? microseconds / 1000 : (microseconds - 999) / 1000
        let (days, millisOfDay) = floorDivision(milliseconds, 86_400_000)
        let (year, month, day) = civil(fromDays: days)
        let secondsOfDay = Int(millisOfDay / 1000)
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { out in
            func put(_ value: Int, digits: Int, at offset: Int) {
                var value = value
                for index in stride(from: offset + digits - 1, through: offset, by: -1) {
                    out[index] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: value % 10)
                    value /= 10
                }
            }
            put(year, digits: 4, at: 0)
            out[4] = UInt8(ascii: "-")
            put(month, digits: 2, at: 5)
            out[7] = UInt8(ascii: "-")
            put(day, digits: 2, at: 8)
            out[10] = UInt8(ascii: "T")
            put(secondsOfDay / 3600, digits: 2, at: 11)
            out[13] = UInt8(ascii: ":")
            put(secondsOfDay / 60 % 60, digits: 2, at: 14)
            out[16] = UInt8(ascii: ":")
            put(secondsOfDay % 60, digits: 2, at: 17)
            out[19] = UInt8(ascii: ".")
            put(Int(millisOfDay % 1000), digits: 3, at: 20)
            out[23] = UInt8(ascii: "Z")
            bytes.append(contentsOf: UnsafeBufferPointer(out))
        }
    }

    /// Quotient rounded down and a remainder in `0..<divisor`, also for times before 1970.
    private static func floorDivision(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
        let (quotient, remainder) = value.quotientAndRemainder(dividingBy: divisor)
        return remainder < 0 ? (quotient - 1, remainder + divisor) : (quotient, remainder)
    }

    /// The proleptic Gregorian date `days` after 1970-01-01: Howard Hinnant's
    /// `civil_from_days` (http://howardhinnant.github.io/date_algorithms.html).
    static func civil(fromDays days: Int64) -> (year: Int, month: Int, day: Int) {
        let shifted = days + 719_468  // days since 0000-03-01
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (Int(year), Int(month), Int(day))
    }
}
