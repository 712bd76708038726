import JWTKit

/// Apple's authorization-code exchange and token revocation.
extension FakeIdentityProvider {
    /// A code `POST /auth/token` accepts once, answering with an ID token for `subject` (and
    /// `email`/`nonce` claims when given) whose `aud` is the requesting client ID.
    public func issueAuthorizationCode(subject: String, email: String? = nil, nonce: String? = nil) -> String {
        let code = RandomToken.make(prefix: "code-")
        let grant = AuthorizationGrant(subject: subject, email: email, nonce: nonce)
        core.state.withLock { $0.authorizationCodes[code] = grant }
        return code
    }

    /// Trusts an EC P-256 public key (PEM) to sign client secrets, as registering a key with
    /// Apple does. Throws when the PEM is not a P-256 public key.
    public func trustClientSecretKey(publicKeyPEM: String) throws {
        let key = try ES256PublicKey(pem: publicKeyPEM)
        core.state.withLock { $0.clientSecretKeys.append(key) }
    }

    /// Every `POST /auth/token` request's form fields, accepted or not, oldest first.
    public var tokenRequests: [[String: String]] { core.state.withLock { $0.tokenRequests } }

    /// Refresh tokens handed out by successful exchanges, oldest first.
    public var issuedRefreshTokens: [String] { core.state.withLock { $0.issuedRefreshTokens } }

    /// Revocations `POST /auth/revoke` accepted, oldest first.
    public var revocations: [Revocation] { core.state.withLock { $0.revocations } }
}
