import Foundation

/// The field rules of a note (docs/api.md, "Notes"), shared by create and update.
enum NoteRules {
    static let maximumBodyLength = 500

    /// The body as stored (trimmed at both ends), or nil with the problem recorded in `reader`.
    /// Lengths count Unicode code points, as the table's `char_length` CHECK does.
    static func body(_ raw: String, in reader: inout JSONObjectReader) -> String? {
        let trimmed = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        let length = trimmed.unicodeScalars.count
        guard length >= 1, length <= maximumBodyLength else {
            reader.fail("body", "must be 1 to \(maximumBodyLength) characters")
            return nil
        }
        guard !TextRules.containsForbiddenControl(trimmed) else {
            reader.fail("body", "must not contain control characters other than newline and tab")
            return nil
        }
        return trimmed
    }
}
