import Foundation
import Hummingbird

/// `application/x-www-form-urlencoded` bodies, as the OAuth endpoints take them.
enum FormBody {
    static func decode(_ request: Request) async throws -> [String: String] {
        let body = try await request.body.collect(upTo: 64 * 1024)
        return parse(String(decoding: body.readableBytesView, as: UTF8.self))
    }

    static func parse(_ text: String) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let nameAndValue = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = decodeComponent(nameAndValue[0])
            fields[name] = nameAndValue.count > 1 ? decodeComponent(nameAndValue[1]) : ""
        }
        return fields
    }

    /// `+` is a space in form encoding, and is replaced before percent-decoding so an encoded
    /// `%2B` stays a plus.
    private static func decodeComponent(_ component: Substring) -> String {
        let spaced = component.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }
}
