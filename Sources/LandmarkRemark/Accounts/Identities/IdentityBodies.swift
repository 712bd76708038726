/// An ID token as a request carries it: the provider, the token, and the nonce the app used.
struct IDTokenFields: Sendable {
    let provider: String
    let idToken: String
    let nonce: String?

    /// Checks the three fields as read (`provider` and `id_token` required), recording every
    /// problem in `body` (under `prefix`, for a nested object); nil when one is missing or wrong.
    static func checked(
        provider: String?, idToken: String?, nonce: String?, in body: inout JSONObjectReader, prefix: String = ""
    ) -> IDTokenFields? {
        if let provider, let problem = IdentityProvider.nameProblem(provider) { body.fail(prefix + "provider", problem) }
        if let idToken, idToken.isEmpty || idToken.utf8.count > IDTokenVerifier.maximumTokenBytes {
            body.fail(prefix + "id_token", "must be 1 to \(IDTokenVerifier.maximumTokenBytes) bytes")
        }
        checkNonce(nonce, in: &body, prefix: prefix)
        guard let provider, let idToken else { return nil }
        return IDTokenFields(provider: provider, idToken: idToken, nonce: nonce)
    }

    /// The same fields confirming a sensitive change (`DELETE /v1/me`, a password change) in the
    /// change's own body, where they are optional: nil, with nothing recorded, when neither
    /// `provider` nor `id_token` was given; with one of them, the other is required.
    static func confirming(
        provider: String?, idToken: String?, nonce: String?, in body: inout JSONObjectReader, prefix: String = ""
    ) -> IDTokenFields? {
        guard provider != nil || idToken != nil else {
            checkNonce(nonce, in: &body, prefix: prefix)
            return nil
        }
        if provider == nil { body.fail(prefix + "provider", "is required") }
        if idToken == nil { body.fail(prefix + "id_token", "is required") }
        return checked(provider: provider, idToken: idToken, nonce: nonce, in: &body, prefix: prefix)
    }

    private static func checkNonce(_ nonce: String?, in body: inout JSONObjectReader, prefix: String) {
        if let nonce, nonce.isEmpty || nonce.utf8.count > 512 { body.fail(prefix + "nonce", "must be 1 to 512 bytes") }
    }
}

/// `POST /v1/auth/id-token` and `POST /v1/me/identities`: an ID token and (Apple) the
/// authorization code that came with it; for sign-in, the username a new account should
/// take; for linking, what confirms the change (`confirm`: the password or another ID token).
struct IDTokenBody: RequestBody {
    enum Rules: Sendable {
        case signIn
        case link
    }

    let token: IDTokenFields
    let username: String?
    let authorizationCode: String?
    /// Linking only; absent, it confirms nothing (enough for a guest only).
    let confirmation: ChangeConfirmation

    init?(reading body: inout JSONObjectReader, rules: Rules) {
        let token: IDTokenFields?
        switch rules {
        case .signIn:
            let request = IDTokenSignInRequest(reading: &body)
            token = IDTokenFields.checked(provider: request.provider, idToken: request.idToken, nonce: request.nonce, in: &body)
            (username, authorizationCode) = (request.username, request.authorizationCode)
            confirmation = .unconfirmed
        case .link:
            let request = LinkIdentityRequest(reading: &body)
            token = IDTokenFields.checked(provider: request.provider, idToken: request.idToken, nonce: request.nonce, in: &body)
            (username, authorizationCode) = (nil, request.authorizationCode)
            confirmation = request.confirm.map { ChangeConfirmation($0, in: &body, prefix: "confirm.") } ?? .unconfirmed
        }
        if let username, let problem = Username.problem(username) { body.fail("username", problem) }
        if let code = authorizationCode, code.isEmpty || code.utf8.count > 1024 {
            body.fail("authorization_code", "must be 1 to 1024 bytes")
        }
        if authorizationCode != nil, let provider = token?.provider, provider != "apple" {
            body.fail("authorization_code", "is for provider apple only")
        }
        guard let token, body.errors.isEmpty else { return nil }
        self.token = token
    }
}
