/// `POST /v1/auth/id-token` and `POST /v1/me/identities`: a provider's ID token, the nonce
/// the app used, optionally the username a new account should take and (Apple) the
/// authorization code that came with the token.
struct IDTokenBody: RequestBody {
    struct Rules: Sendable {
        /// Linking takes no username: the account has one.
        let allowsUsername: Bool
    }

    let provider: String
    let idToken: String
    let nonce: String?
    let username: String?
    let authorizationCode: String?

    init?(reading body: inout JSONObjectReader, rules: Rules) {
        let provider = body.string("provider")
        let idToken = body.string("id_token")
        nonce = body.string("nonce", required: false)
        username = rules.allowsUsername ? body.string("username", required: false) : nil
        authorizationCode = body.string("authorization_code", required: false)
        if let provider, let problem = IdentityProvider.nameProblem(provider) { body.fail("provider", problem) }
        if let idToken, idToken.isEmpty || idToken.utf8.count > IDTokenVerifier.maximumTokenBytes {
            body.fail("id_token", "must be 1 to \(IDTokenVerifier.maximumTokenBytes) bytes")
        }
        if let nonce, nonce.isEmpty || nonce.utf8.count > 512 { body.fail("nonce", "must be 1 to 512 bytes") }
        if let username, let problem = AccountRules.usernameProblem(username) { body.fail("username", problem) }
        if let code = authorizationCode, code.isEmpty || code.utf8.count > 1024 {
            body.fail("authorization_code", "must be 1 to 1024 bytes")
        }
        if authorizationCode != nil, let provider, provider != "apple" {
            body.fail("authorization_code", "is for provider apple only")
        }
        guard let provider, let idToken, body.errors.isEmpty else { return nil }
        (self.provider, self.idToken) = (provider, idToken)
    }
}

/// A fresh ID token confirming a sensitive change (`DELETE /v1/me`, a password change),
/// read from the same body as the change: `provider`, `id_token` and optionally `nonce`.
struct IDTokenConfirmation: Sendable {
    let provider: String
    let idToken: String
    let nonce: String?

    /// Reads the three fields when the body has `id_token`; nil (and nothing recorded) when not.
    static func read(from body: inout JSONObjectReader) -> IDTokenConfirmation? {
        guard body.contains("id_token") || body.contains("provider") else { return nil }
        let provider = body.string("provider")
        let idToken = body.string("id_token")
        let nonce = body.string("nonce", required: false)
        if let provider, let problem = IdentityProvider.nameProblem(provider) { body.fail("provider", problem) }
        if let idToken, idToken.isEmpty || idToken.utf8.count > IDTokenVerifier.maximumTokenBytes {
            body.fail("id_token", "must be 1 to \(IDTokenVerifier.maximumTokenBytes) bytes")
        }
        if let nonce, nonce.isEmpty || nonce.utf8.count > 512 { body.fail("nonce", "must be 1 to 512 bytes") }
        guard let provider, let idToken else { return nil }
        return IDTokenConfirmation(provider: provider, idToken: idToken, nonce: nonce)
    }
}
