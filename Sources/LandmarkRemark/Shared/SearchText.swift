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
    ///
    /// With `bigramIndexed` (notes' `body_folded`, whose `notes_search` also holds the bigrams
    /// of runs beyond ASCII: migrations 0034 and 0041), a text without a trigram but with two
    /// letters or digits in a row (東京, 서울, `qj`) is a pair: its substring is tested with
    /// `strpos` (the same test as the escaped LIKE), which no index serves, and with
    /// `askingIndex` the index is asked too, through `pairLookups`: one of them holds for every
    /// note that holds the text. A walk that tests rows one by one needs only the substring.
    /// (A LIKE without trigrams on a column of the same GIN index makes the planner cost the
    /// index as read whole, gincostestimate, and it read the table instead.)
    ///
    /// With `foldedOnce` (a statement planned once, for any value), the text is folded in a
    /// subquery, which runs once per execution and is still an index condition: in a generic
    /// plan `search_pattern($1)` is computed again for every row it is tested on (8 µs each,
    /// 8 ms for a walk of 1,000 notes). A statement planned for its values folds it at planning.
    func matches(_ column: PostgresQuery, bigramIndexed: Bool = false, foldedOnce: Bool = false,
                 askingIndex: Bool = true) -> PostgresQuery {
        guard bigramIndexed, isPair else { return "\(column) LIKE \(Self.once("search_pattern(\(text))", foldedOnce))" }
        let substring: PostgresQuery = "strpos(\(column), \(Self.once("search_fold(\(text))", foldedOnce))) > 0"
        guard askingIndex else { return substring }
        let anyLookup = pairLookups(column, foldedOnce: foldedOnce).joined(separator: " OR ")
        return "(\(anyLookup)) AND \(substring)"
    }

    /// For a pair in a bigram-indexed column (see `matches`), the conditions `notes_search`
    /// answers, one of which holds for every note that holds the text (migration 0041 says why):
    /// its pairs beyond ASCII among the bigrams of the note's runs beyond ASCII; or, for a text
    /// of ASCII pairs, its first pair there or after the trigrams' blank or a letter (a regular
    /// expression pg_trgm turns into the 37 trigrams that end in it; NULL, and so no rows, for a
    /// text with a pair beyond ASCII). A statement should ask each in a scan of its own: as one
    /// OR, planned once, the planner once read a time window whole instead (0041). Empty for a
    /// text that is not a pair: its LIKE is its own index condition.
    func pairLookups(_ column: PostgresQuery, foldedOnce: Bool) -> [PostgresQuery] {
        guard isPair else { return [] }
        return [
            "search_bigrams_beyond_ascii(\(column)) @> \(Self.once("search_query_bigrams(search_fold(\(text)))", foldedOnce))",
            "\(column) ~ \(Self.once("search_ascii_pair_pattern(search_fold(\(text)))", foldedOnce))",
        ]
    }

    /// A text no trigram index finds but the bigrams can: two letters or digits in a row.
    var isPair: Bool { !hasTrigram && hasBigram }

    private static func once(_ expression: PostgresQuery, _ foldedOnce: Bool) -> PostgresQuery {
        foldedOnce ? "(SELECT \(expression))" : expression
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

    /// Whether the text has two letters or digits in a row (characters as people count them:
    /// `a` with a combining accent is one), which folded are one bigram `search_bigrams`
    /// indexes at least: no letter folds to nothing or to a separator. Without one (a single
    /// letter, an emoji, `%`) no index can find the text, only a filter that narrows the rows.
    var hasBigram: Bool {
        var previous = false
        for character in text {
            let current = Self.isWordCharacter(character)
            if current && previous { return true }
            previous = current
        }
        return false
    }

    /// Whether the text has more than one word: runs of letters or digits with something
    /// else between them (`great view`, `coffee note 999`; not `crème` or 東京の夜景). The
    /// trigram index finds the notes that hold every trigram of every word, anywhere: for
    /// two common words many more than hold the phrase (`great view`: 526 notes for 57).
    var isPhrase: Bool {
        var runs = 0
        var inRun = false
        for character in text {
            let current = Self.isWordCharacter(character)
            if current && !inRun { runs += 1 }
            inRun = current
        }
        return runs > 1
    }

    /// A letter or digit, as people count characters: what words (`isPhrase`) and bigrams
    /// (`hasBigram`) are made of.
    private static func isWordCharacter(_ character: Character) -> Bool {
        character.isLetter || character.isNumber
    }

    /// Whether an index finds the notes whose bodies hold the text: a trigram or a bigram.
    var isIndexed: Bool { hasTrigram || hasBigram }
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
