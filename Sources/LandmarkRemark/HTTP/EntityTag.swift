import Credentials
import Foundation

/// Strong entity tags for single-note responses and photo variants.
///
/// The tag is a hash of the exact JSON body, so it changes whenever anything a client
/// sees changes, including what `updated_at` does not record (a deleted place
/// setting `place_id` to null), and a replayed idempotent response gets the same tag.
enum EntityTag {
    /// `"…"`: base64url of the first 16 bytes of the body's SHA-256.
    static func of(_ body: some Collection<UInt8>) -> String {
        of(sha256: Tokens.sha256(Array(body)))
    }

    /// The tag of a body whose SHA-256 is known already (a photo variant's, stored with it).
    static func of(sha256 digest: [UInt8]) -> String {
        "\"" + Base64URL.encode(digest.prefix(16)) + "\""
    }

    /// `If-None-Match`: weak comparison, so `W/"x"` matches `"x"`; `*` matches any.
    static func noneMatchHits(_ header: String?, current: String) -> Bool {
        guard let header else { return false }
        return tags(in: header).contains { $0 == "*" || strip(weak: $0) == current }
    }

    /// `If-Match`: strong comparison, so a weak tag never matches; `*` matches any.
    /// True when the header is absent.
    static func matchHolds(_ header: String?, current: String) -> Bool {
        guard let header else { return true }
        return tags(in: header).contains { $0 == "*" || $0 == current }
    }

    private static func tags(in header: String) -> [String] {
        header.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    private static func strip(weak tag: String) -> String {
        tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag
    }
}
