import JWTKit

/// Everything about the provider that tests change or read while it serves requests; kept in one
/// `Mutex` in ``ProviderCore`` so the route handlers and the test's own calls never race.
struct ProviderState: Sendable {
    /// Both set once the server is listening (they depend on the bound port).
    var baseURL = ""
    var issuer = ""
    var keys: KeyRing
    var available = true
    var keysCacheControl: String? = "public, max-age=3600"
    var keysFetchCount = 0

    /// Unused authorization codes, with the identity each stands for. A code is removed when a
    /// token request spends it, so a second exchange fails as it does at a real provider.
    var authorizationCodes: [String: AuthorizationGrant] = [:]
    var tokenRequests: [[String: String]] = []
    var issuedRefreshTokens: [String] = []
    var revocations: [Revocation] = []
    /// Keys a client secret (an ES256 JWT, as Apple requires) may be signed with.
    var clientSecretKeys: [ES256PublicKey] = []
}

/// Who an authorization code signs in, and what its ID token should carry.
struct AuthorizationGrant: Sendable {
    let subject: String
    let email: String?
    let nonce: String?
}
