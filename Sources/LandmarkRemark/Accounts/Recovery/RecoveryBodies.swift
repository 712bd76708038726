/// `POST /v1/me/email/verify`: a code (signed in) or a link's token, not both.
struct VerifyEmailBody: RequestBody, Equatable {
    enum Proof: Equatable { case code(String), link(String) }
    let proof: Proof

    init?(reading reader: inout JSONObjectReader, rules: Void) {
        let request = VerifyEmailRequest(reading: &reader)
        guard let proof = RecoveryProof.read(code: request.code, token: request.token, in: &reader) else { return nil }
        self.proof = proof
    }
}

/// `POST /v1/auth/password/forgot`.
struct ForgotPasswordBody: RequestBody, Equatable {
    let login: String

    init?(reading reader: inout JSONObjectReader, rules: Void) {
        let request = ForgotPasswordRequest(reading: &reader)
        guard let login = request.login, reader.errors.isEmpty else { return nil }
        guard (1...254).contains(login.unicodeScalars.count) else {
            reader.fail("login", "must be 1 to 254 characters")
            return nil
        }
        self.login = login
    }
}

/// `POST /v1/auth/password/reset`: `login` and `code`, or `token`; and the new password, whose
/// rules are checked once the code says whose it is.
struct ResetPasswordBody: RequestBody, Equatable {
    let login: String?
    let proof: VerifyEmailBody.Proof
    let newPassword: String

    init?(reading reader: inout JSONObjectReader, rules: Void) {
        let request = ResetPasswordRequest(reading: &reader)
        let proof = RecoveryProof.read(code: request.code, token: request.token, in: &reader)
        if case .code = proof, request.login == nil { reader.fail("login", "is required with code") }
        if case .link = proof, request.login != nil { reader.fail("login", "goes with code, not with token") }
        if let login = request.login, !(1...254).contains(login.unicodeScalars.count) { reader.fail("login", "must be 1 to 254 characters") }
        guard let proof, let newPassword = request.newPassword, reader.errors.isEmpty else { return nil }
        (self.login, self.proof, self.newPassword) = (request.login, proof, newPassword)
    }
}

enum RecoveryProof {
    /// Exactly one of a 6-digit `code` and a link `token`.
    static func read(code: String?, token: String?, in reader: inout JSONObjectReader) -> VerifyEmailBody.Proof? {
        switch (code, token) {
        case (let code?, nil):
            guard code.utf8.count == 6, code.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
                reader.fail("code", "must be the 6 digits from the message")
                return nil
            }
            return .code(code)
        case (nil, let token?):
            guard AccountCodes.tenant(ofLink: token) != nil else {
                reader.fail("token", "is not a link token")
                return nil
            }
            return .link(token)
        case (.some, .some):
            reader.fail("token", "send code or token, not both")
            return nil
        case (nil, nil):
            if reader.errors.isEmpty { reader.fail("code", "code or token is required") }
            return nil
        }
    }
}
