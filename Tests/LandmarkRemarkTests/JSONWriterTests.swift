import Foundation
import NIOCore
@testable import LandmarkRemark
import Testing

/// The hand-written JSON of the hot responses: valid JSON, every string back exactly,
/// numbers as `JSONEncoder` writes them.
@Suite struct JSONWriterTests {
    struct Sample: JSONWritable {
        let text: String
        let number: Double
        func write(to json: inout JSONWriter) {
            json.object { json in
                json.key("items")
                json.array([Item(text: text), Item(text: "")])
                json.key("n")
                json.number(number)
                json.key("none")
                json.string(nil as String?)
                json.key("yes")
                json.bool(true)
            }
        }
    }

    struct Item: JSONWritable {
        let text: String
        func write(to json: inout JSONWriter) {
            json.object { json in
                json.key("text")
                json.string(text)
                json.key("count")
                json.integer(-42)
            }
        }
    }

    static let awkwardStrings = [
        "plain", "", "quote \" and backslash \\ and slash /", "new\nline\r\ttab", "\u{01}\u{08}\u{0C}\u{1F}\u{7F}",
        "naïve café 東京 🏳️‍🌈", "\u{2028}\u{2029}", "' OR 1=1; -- %_", "\\u0041 is not A",
    ]

    @Test(arguments: awkwardStrings) func stringsRoundTrip(_ text: String) throws {
        let buffer = Sample(text: text, number: 1.5).jsonBuffer
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(buffer.readableBytesView)) as? [String: Any])
        let items = try #require(parsed["items"] as? [[String: Any]])
        #expect(items.count == 2)
        #expect(items[0]["text"] as? String == text)
        #expect(items[0]["count"] as? Int == -42)
        #expect(items[1]["text"] as? String == "")
        #expect(parsed["none"] is NSNull)
        #expect(parsed["yes"] as? Bool == true)
    }

    @Test func numbersAreWrittenAsJSONEncoderWritesThem() throws {
        for number in [0, -0.5, 151.2093, -33.8688, 180, -180, 1e-05, 123456.7, 0.1 + 0.2, 6_371_008.8] {
            let ours = String(buffer: Sample(text: "", number: number).jsonBuffer)
            let encoded = String(decoding: try JSONEncoder().encode(["n": number]), as: UTF8.self)
            let theirs = try #require(encoded.split(separator: ":").last?.dropLast())
            #expect(ours.contains("\"n\":\(theirs),"), "\(number): ours \(ours), JSONEncoder \(encoded)")
        }
        #expect(String(buffer: Sample(text: "", number: .nan).jsonBuffer).contains("\"n\":null"))
    }

    @Test func integersAndQuotedIdsAreExactDigits() {
        struct Integers: JSONWritable {
            let value: Int64
            func write(to json: inout JSONWriter) {
                json.object { json in
                    json.key("id")
                    json.quotedInteger(value)
                    json.key("n")
                    json.integer(value)
                }
            }
        }
        for value in [0, 7, -7, 10, 1_000_000, Int64.max, Int64.min] {
            #expect(String(buffer: Integers(value: value).jsonBuffer) == "{\"id\":\"\(value)\",\"n\":\(value)}")
        }
    }

    @Test func timestampsAreRFC3339WithMilliseconds() {
        #expect(Timestamp.format(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
        #expect(Timestamp.format(Date(timeIntervalSince1970: 1_795_000_000.0079)) == "2026-11-18T11:06:40.007Z")
        #expect(Timestamp.format(Date(timeIntervalSince1970: -0.5)) == "1969-12-31T23:59:59.500Z")
        // A whole millisecond a hair under itself as a Double (…40.1229999), as a timestamptz of
        // …40.123000 reads back: still .123, not .122 (a suspension's `until` came back a
        // millisecond early).
        #expect(Timestamp.format(Date(timeIntervalSince1970: 1_795_000_000.123)) == "2026-11-18T11:06:40.123Z")
        #expect(Timestamp.format(Date(timeIntervalSince1970: -0.0005)) == "1969-12-31T23:59:59.999Z")
        #expect(Timestamp.format(Date(timeIntervalSince1970: 951_782_400.5)) == "2000-02-29T00:00:00.500Z")
    }

    /// The hand-written calendar against the C library's, over years 1 to 9999.
    @Test func timestampsAgreeWithGmtime() {
        var generator = SystemRandomNumberGenerator()
        let edges: [Int64] = [-62_135_596_800, -1, 0, 951_782_399, 951_868_800, 4_107_542_400, 253_402_300_799]
        let seconds = edges + (0..<20_000).map { _ in Int64.random(in: -62_135_596_800...253_402_300_799, using: &generator) }
        for second in seconds {
            let millis = Int.random(in: 0...999, using: &generator)
            var time = time_t(second)
            var parts = tm()
            gmtime_r(&time, &parts)
            let expected = String(
                format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
                Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), millis)
            // Whole milliseconds plus a quarter, so rounding down lands on `millis`.
            let date = Date(timeIntervalSince1970: (Double(second) * 1000 + Double(millis) + 0.25) / 1000)
            #expect(Timestamp.format(date) == expected, "\(second).\(millis)")
        }
    }
}
