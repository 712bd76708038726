import Foundation

/// Minting ID tokens from Swift: tests make every bad token by changing one thing in a good one.
extension FakeIdentityProvider {
    /// The usual ID-token claims: `iss` (this provider's issuer), `sub`, `aud`, `iat`, `exp`
    /// (`issuedAt + lifetime`), and `nbf`, `nonce`, `email` (with `email_verified: true`) when given.
    public func claims(
        subject: String,
        audience: String,
        nonce: String? = nil,
        email: String? = nil,
        issuedAt: Date = Date(),
        lifetime: TimeInterval = 600,
        notBefore: Date? = nil
    ) -> [String: ClaimValue] {
        core.claims(
            subject: subject, audience: audience, nonce: nonce, email: email,
            issuedAt: issuedAt, lifetime: lifetime, notBefore: notBefore)
    }

    /// Signs `claims` exactly as given (nothing is added) with the chosen key. The header is
    /// `{"alg":"RS256"|"ES256","typ":"JWT","kid":…}` unless `header` changes it.
    public func mint(_ claims: [String: ClaimValue], key: KeyChoice = .rsa, header: HeaderOverrides = .init()) async throws -> String {
        try await core.mint(claims, key: key, header: header)
    }

    /// An unsecured token: header `{"alg":"none","typ":"JWT","kid":<current RSA kid>}` and an
    /// empty signature (`header.payload.`).
    public func mintUnsigned(_ claims: [String: ClaimValue]) -> String {
        core.mintUnsigned(claims)
    }

    /// The key-confusion attack: header `{"alg":"HS256","typ":"JWT","kid":<current RSA kid>}`,
    /// signed HMAC-SHA256 with the current RSA public key's PEM text as the secret.
    public func mintHS256WithPublicKey(_ claims: [String: ClaimValue]) async throws -> String {
        try await core.mintHS256WithPublicKey(claims)
    }
}
