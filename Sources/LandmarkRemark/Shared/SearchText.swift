/// The text of a `q` parameter: a substring to find, ignoring case, in note bodies,
/// usernames or place names.
struct SearchText: Sendable, Equatable {
    static let maximumLength = 100

    let text: String

    /// `%text%` for ILIKE, with `\`, `%` and `_` escaped so they match themselves
    /// (backslash is LIKE's default escape character).
    var likePattern: String {
        var escaped = "%"
        for character in text {
            if character == "\\" || character == "%" || character == "_" { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped + "%"
    }

    /// Whether the text has a run of 3 letters or digits: what pg_trgm makes index trigrams of.
    var hasTrigram: Bool {
        var run = 0
        for scalar in text.unicodeScalars {
            run = scalar.properties.isAlphabetic || scalar.properties.numericType != nil ? run + 1 : 0
            if run >= 3 { return true }
        }
        return false
    }
}

/// Rules every free text the API stores or searches follows.
enum TextRules {
    /// Control characters (Unicode category Cc) other than newline and tab; NUL among them,
    /// which PostgreSQL text cannot hold.
    static func containsForbiddenControl(_ text: String) -> Bool {
        text.unicodeScalars.contains { scalar in
            scalar.properties.generalCategory == .control && scalar != "\n" && scalar != "\t"
        }
    }
}
