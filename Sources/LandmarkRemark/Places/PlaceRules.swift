import Foundation

/// The name rule: 1–100 characters after trimming, no control characters.
enum PlaceRules {
    /// The name as stored (trimmed at both ends), or nil with the problem recorded in `reader`.
    static func name(_ raw: String, in reader: inout JSONObjectReader) -> String? {
        let trimmed = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...100).contains(trimmed.unicodeScalars.count), !TextRules.containsForbiddenControl(trimmed),
            !trimmed.contains("\n"), !trimmed.contains("\t")
        else {
            reader.fail("name", "must be 1 to 100 characters, without control characters")
            return nil
        }
        return trimmed
    }
}
