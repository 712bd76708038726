/// An ID token as a request carries it: the provider, the token, and the nonce the app used.
struct IDTokenFields: Sendable {
    let provider: String
    let idToken: String
    let nonce: String?

    /// Reads the three fields (`provider` and `id_token` required), recording every problem.
    static func read(from body: inout JSONObjectReader) -> IDTokenFields? {
        let provider = body.string("provider")
        let idToken = body.string("id_token")
        let nonce = body.string("nonce", required: false)
        if let provider, let problem = IdentityProvider.nameProblem(provider) { body.fail("provider", problem) }
        if let idToken, idToken.isEmpty || idToken.utf8.count > IDTokenVerifier.maximumTokenBytes {
            body.fail("id_token", "must be 1 to \(IDTokenVerifier.maximumTokenBytes) bytes")
        }
        if let nonce, nonce.isEmpty || nonce.utf8.count > 512 { body.fail("nonce", "must be 1 to 512 bytes") }
        guard let provider, let idToken else { return nil }
        return IDTokenFields(provider: provider, idToken: idToken, nonce: nonce)
    }

    /// The same fields confirming a sensitive change (`DELETE /v1/me`, a password change) in the
    /// change's own body; nil, with nothing recorded, when the body has neither of the first two.
    static func readConfirmation(from body: inout JSONObjectReader) -> IDTokenFields? {
        guard body.contains("id_token") || body.contains("provider") else { return nil }
        return read(from: &body)
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
    let confirmation: Confirmation

    init?(reading body: inout JSONObjectReader, rules: Rules) {
        let token = IDTokenFields.read(from: &body)
        username = rules == .signIn ? body.string("username", required: false) : nil
        var confirmation = Confirmation(password: nil, idToken: nil)
        if rules == .link, var nested = body.object("confirm", required: false) {
            confirmation = Confirmation.read(from: &nested)
            body.absorb(nested)
        }
        self.confirmation = confirmation
        authorizationCode = body.string("authorization_code", required: false)
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
