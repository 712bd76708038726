/// What one tenant accepts from one identity provider: the operator's row of
/// `identity_providers` joined with what the service knows of Apple and Google.
struct IdentityProvider: Sendable {
    /// What a token's `nonce` claim holds for the nonce the client sends.
    enum NonceFormat: String, Sendable {
        /// Its SHA-256 in lowercase hex (Apple; Google's iOS SDK).
        case hashed
        /// The value itself (OpenID Connect; Google on the web).
        case raw
        case either
    }

    /// `apple`, `google` or `oidc:<name>`.
    let name: String
    /// The audiences this tenant's apps use; a token's `aud` must be one of them.
    let clientIDs: [String]
    let issuers: [String]
    let keysURL: String
    let nonce: NonceFormat
    /// Apple only, when the operator set a key: exchanges authorization codes, revokes tokens.
    let apple: AppleAccount?

    struct AppleAccount: Sendable {
        let teamID: String
        let keyID: String
        let privateKeyPEM: String
        let tokenURL: String
        let revokeURL: String
    }

    static func nameProblem(_ name: String) -> String? {
        if name == "apple" || name == "google" { return nil }
        let scalars = Array(name.unicodeScalars)
        let valid = name.hasPrefix("oidc:") && (6...37).contains(scalars.count)
            && scalars.dropFirst(5).enumerated().allSatisfy { index, scalar in
                ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) || (index > 0 && scalar == "-")
            }
        return valid ? nil : "must be apple, google or oidc:<name> (a-z 0-9 -, at most 32)"
    }
}
