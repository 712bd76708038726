import Credentials
import Foundation

/// Builds and takes apart JWS compact serializations (`header.payload.signature`) by hand, so the
/// fake controls every byte of the header: jwt-kit's own signing always writes the header it
/// thinks right, and the tests need wrong ones too.
enum CompactJWS {
    /// A header as an ordered list of members, so the JSON reads `{"alg":…,"typ":…,"kid":…}` in
    /// that order every time (tests compare header JSON as text).
    typealias Header = [(name: String, value: String)]

    static func headerJSON(_ header: Header) -> String {
        let members = header.map { "\(jsonString($0.name)):\(jsonString($0.value))" }
        return "{" + members.joined(separator: ",") + "}"
    }

    /// Claims as JSON with sorted keys: stable output, which makes failing tests easier to read.
    static func payloadJSON(_ claims: [String: ClaimValue]) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Infinity and NaN are the only claim values JSON cannot hold; written as strings they make
        // a malformed claim, which is what a test asking for them wants, and encoding cannot fail.
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        return try! encoder.encode(claims)
    }

    /// The bytes a JWS signature covers: `base64url(header).base64url(payload)`.
    static func signingInput(header: Header, claims: [String: ClaimValue]) -> String {
        Base64URL.encode(Array(headerJSON(header).utf8)) + "." + Base64URL.encode(payloadJSON(claims))
    }

    static func token(signingInput: String, signature: some Collection<UInt8>) -> String {
        signingInput + "." + Base64URL.encode(signature)
    }

    /// A token's three segments decoded, or nil when it is not a well-formed compact JWS.
    struct Parts {
        let header: [String: ClaimValue]
        let claims: [String: ClaimValue]
        let signingInput: String
        let signature: Data
    }

    static func parse(_ token: String) -> Parts? {
        let segments = token.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3,
            let headerData = Base64URL.decode(segments[0]).map({ Data($0) }),
            let claimsData = Base64URL.decode(segments[1]).map({ Data($0) }),
            let signature = Base64URL.decode(segments[2]).map({ Data($0) }),
            let header = try? JSONDecoder().decode([String: ClaimValue].self, from: headerData),
            let claims = try? JSONDecoder().decode([String: ClaimValue].self, from: claimsData)
        else { return nil }
        return Parts(header: header, claims: claims, signingInput: "\(segments[0]).\(segments[1])", signature: signature)
    }

    private static func jsonString(_ text: String) -> String {
        // JSONEncoder on a lone String gives a JSON string literal with escaping done right, and
        // cannot fail on a String.
        String(decoding: try! JSON.encode(text), as: UTF8.self)
    }
}
