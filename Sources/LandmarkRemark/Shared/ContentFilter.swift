import Foundation

/// A tenant's word list (issue 34): what its apps refuse, or hold for a moderator, in note
/// bodies, place names and usernames. Text and words are compared as skeletons: compatibility
/// forms (full-width, ligatures) composed as NFKC, case and diacritics folded, zero-width and
/// soft-hyphen characters dropped, Cyrillic and Greek look-alikes and digit-for-letter swaps
/// folded to one Latin letter each.
///
/// A word matches whole words of the text (so `ass` does not match `class` or `assassin`), and
/// a phrase matches those words in a row; a word in a script written without spaces (Chinese,
/// Japanese, Thai) matches anywhere in the text. Letters spread apart (`b a d`, `b.a.d`) are
/// separate words and not matched: a filter catches the common evasions; the reports catch
/// the rest.
struct ContentFilter: Sendable, Equatable {
    enum Action: String, Sendable {
        /// `422 content_refused`, naming the field.
        case refuse
        /// Saved, held for a moderator (`moderation: "pending"`).
        case hold
    }

    let action: Action
    /// Each word as the skeleton's tokens, and whether it matches anywhere instead.
    private let words: [(tokens: [String], anywhere: Bool)]

    static let none = ContentFilter(action: .refuse, words: [])

    init(action: Action, words: [String]) {
        self.action = action
        self.words = words.compactMap { word in
            let tokens = Self.tokens(Self.skeleton(word))
            guard !tokens.isEmpty else { return nil }
            return (tokens, tokens.contains { $0.unicodeScalars.contains(where: Self.unspaced) })
        }
    }

    static func == (lhs: ContentFilter, rhs: ContentFilter) -> Bool {
        lhs.action == rhs.action && lhs.words.map(\.tokens) == rhs.words.map(\.tokens)
    }

    var isEmpty: Bool { words.isEmpty }

    /// Whether `text` (the value of `field`) is to be held for a moderator; refused text throws
    /// `ContentRefused`.
    func holds(_ text: String?, field: String) throws -> Bool {
        guard let text, matches(text) else { return false }
        guard action == .hold else { throw ContentRefused(field: field) }
        return true
    }

    /// Whether `text` holds one of the words.
    func matches(_ text: String) -> Bool {
        guard !words.isEmpty else { return false }
        let skeleton = Self.skeleton(text)
        let tokens = Self.tokens(skeleton)
        let joined = tokens.joined()
        return words.contains { word in
            if word.anywhere { return joined.contains(word.tokens.joined()) }
            guard word.tokens.count <= tokens.count else { return false }
            return (0...(tokens.count - word.tokens.count)).contains { start in
                tokens[start..<(start + word.tokens.count)].elementsEqual(word.tokens)
            }
        }
    }

    // MARK: - Skeletons

    /// Scripts written without spaces between words.
    static func unspaced(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x3040...0x30FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xF900...0xFAFF, 0x20000...0x2FA1F, 0x0E00...0x0E7F: true
        default: false
        }
    }

    /// Invisible characters inserted to split a word.
    private static let invisible: Set<UInt32> = [0x00AD, 0x034F, 0x180E, 0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF]

    /// Look-alikes and swaps, after case folding, to the Latin letter they pass for.
    private static let lookAlikes: [Character: Character] = [
        // Cyrillic
        "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c", "т": "t",
        "у": "y", "х": "x", "ѕ": "s", "і": "i", "ї": "i", "ј": "j", "ԁ": "d", "ԛ": "q", "ԝ": "w", "һ": "h",
        // Greek
        "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t", "υ": "u",
        "χ": "x", "ω": "w",
        // Digits and signs for letters; i, l and 1 pass for each other, so all are i. (Not `!`
        // and `|`: punctuation far more often than letters.)
        "0": "o", "1": "i", "l": "i", "3": "e", "4": "a", "@": "a", "5": "s", "$": "s", "7": "t",
        "8": "b",
    ]

    static func skeleton(_ text: String) -> String {
        let visible = String(String.UnicodeScalarView(text.unicodeScalars.filter { !invisible.contains($0.value) }))
        let folded = visible.precomposedStringWithCompatibilityMapping
            .folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
        return String(folded.map { lookAlikes[$0] ?? $0 })
    }

    /// The skeleton's words: runs of letters and digits.
    static func tokens(_ skeleton: String) -> [String] {
        skeleton.split { !($0.isLetter || $0.isNumber) }.map(String.init)
    }
}

/// Text the tenant's word list refuses, in `field` (`Problems+Domain.swift`: `422 content_refused`).
struct ContentRefused: Error, Equatable {
    let field: String
}
