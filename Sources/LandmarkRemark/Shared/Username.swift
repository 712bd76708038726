/// The rule for usernames, which accounts enforce when a name is chosen and the lists use
/// to refuse an author filter no account could match.
enum Username {
    /// Why `username` cannot be one, or nil: 3 to 32 characters of `A-Z a-z 0-9 . _ -`.
    static func problem(_ username: String) -> String? {
        let valid = (3...32).contains(username.unicodeScalars.count) && username.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "." || $0 == "_" || $0 == "-"
        }
        return valid ? nil : "must be 3 to 32 characters of A-Z a-z 0-9 . _ -"
    }
}
