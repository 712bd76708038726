import Credentials

/// The API's password rules: the tenant's minimum to 128 code points, never
/// truncated, no composition rules, not the username, not a common password.
enum PasswordPolicy {
    static let maximumLength = 128

    /// Problems with `password`, reported against `field` (`password` or `password.new`).
    static func problems(_ password: String, username: String, minimumLength: Int, field: String) -> [AppError.FieldError] {
        let length = password.unicodeScalars.count
        if length < minimumLength || length > maximumLength {
            return [.init(field: field, message: "must be \(minimumLength) to \(maximumLength) characters")]
        }
        if password.lowercased() == username.lowercased() {
            return [.init(field: field, message: "must not be the username")]
        }
        if CommonPasswords.contains(password) {
            return [.init(field: field, message: "is too common; choose one that is harder to guess")]
        }
        return []
    }
}

/// Username and email rules shared by signup and profile changes.
enum AccountRules {
    /// A plausible address: one `@`, something before it, a dotted domain after, no spaces or controls.
    static func emailProblem(_ email: String) -> String? {
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        let plausible = email.utf8.count <= 254 && parts.count == 2 && !parts[0].isEmpty && parts[0].utf8.count <= 64
            && parts[1].contains(".") && !parts[1].hasPrefix(".") && !parts[1].hasSuffix(".")
            && !email.unicodeScalars.contains { $0.properties.isWhitespace || $0.value < 0x20 || $0.value == 0x7F }
        return plausible ? nil : "must be a valid email address"
    }
}
