import Credentials

/// Usernames for accounts that did not choose one: from the token's `name` (Apple gives a
/// name only once, to the app, which may pass `username` instead), or random. Never from the
/// email: usernames are public (`GET /v1/users/{username}`, every note's author), and an
/// email's local part is often someone's address book entry for them.
enum UsernameCandidates {
    /// The name folded to the username alphabet, then the same with random digits in case it
    /// is taken, then a random `user-…`.
    static func derived(name: String?) -> [String] {
        let base = name.map(fold) ?? ""
        guard base.count >= 3 else { return [random(prefix: "user-")] }
        return alternatives(to: String(base.prefix(32)))
    }

    /// `name` itself, then variants with digits (for `409 username_taken`'s suggestion).
    static func alternatives(to name: String) -> [String] {
        let stem = String(name.prefix(27))
        return [name] + (0..<4).map { _ in "\(stem)-\(Int.random(in: 1000...9999))" } + [random(prefix: "user-")]
    }

    static func guest() -> String { random(prefix: "guest-") }

    /// `prefix` and ten random characters of a-z0-9.
    static func random(prefix: String) -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789")
        return prefix + String(Tokens.randomBytes(count: 10).map { alphabet[Int($0) % alphabet.count] })
    }

    /// Lowercase ASCII letters and digits kept, runs of anything else one dot, no dots at the ends.
    private static func fold(_ text: String) -> String {
        var result = ""
        var pendingDot = false
        for scalar in text.lowercased().unicodeScalars {
            if ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) {
                if pendingDot && !result.isEmpty { result.append(".") }
                pendingDot = false
                result.unicodeScalars.append(scalar)
            } else {
                pendingDot = true
            }
        }
        return result
    }
}
