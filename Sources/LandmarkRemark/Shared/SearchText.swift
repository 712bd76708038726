import Postgres

/// The text of a `q` parameter: a substring to find, ignoring case, accents and width, in note bodies,
/// usernames or place names.
struct SearchText: Sendable, Equatable {
    static let maximumLength = 100

    let text: String

    /// Whether `column` (a folded one: `body_folded`, `username_folded`, `name_folded`) holds
    /// the text: both sides folded alike (case, accents, width: `search_fold`, migration 0033),
    /// `%`, `_` and `\` matching themselves. The text is a bound parameter; the database folds
    /// it, so there is one definition of folding, and the trigram index on the column serves it.
    func matches(_ column: PostgresQuery) -> PostgresQuery {
        "\(column) LIKE search_pattern(\(text))"
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
