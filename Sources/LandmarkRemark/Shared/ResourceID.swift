/// Ids of notes, places and users as the API spells them: strings of decimal digits.
enum ResourceID {
    /// Positive and fitting in a bigint; nil for anything else.
    static func parse(_ text: some StringProtocol) -> Int64? {
        guard !text.isEmpty, text.utf8.count <= 19, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            let value = Int64(text), value > 0
        else { return nil }
        return value
    }
}
