import Foundation

/// The provider's JSON: sorted keys (stable documents, readable diffs) and unescaped slashes
/// (URLs in discovery read as URLs).
enum JSON {
    static func encode(_ value: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(value)
    }
}
