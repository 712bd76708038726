/// `POST /v1/auth/signup`.
struct SignupBody: RequestBody {
    let username: String
    let password: String
    let email: String?

    init?(reading body: inout JSONObjectReader, rules tenant: Tenant) {
        let username = body.string("username")
        let password = body.string("password")
        email = body.string("email", required: false, nullable: true)
        if let username, let problem = Username.problem(username) { body.fail("username", problem) }
        if let email, let problem = AccountRules.emailProblem(email) { body.fail("email", problem) }
        if let password {
            for problem in PasswordPolicy.problems(password, username: username ?? "", minimumLength: tenant.minPasswordLength, field: "password") {
                body.fail(problem.field, problem.message)
            }
        }
        guard let username, let password, body.errors.isEmpty else { return nil }
        (self.username, self.password) = (username, password)
    }
}

/// `POST /v1/auth/login`: `username` is a username or an email.
struct LoginBody: RequestBody {
    let login: String
    let password: String

    init?(reading body: inout JSONObjectReader, rules: Void) {
        let login = body.string("username")
        let password = body.string("password")
        if let login, login.isEmpty || login.unicodeScalars.count > 254 { body.fail("username", "must be 1 to 254 characters") }
        if let password, password.unicodeScalars.count > PasswordPolicy.maximumLength {
            body.fail("password", "must be at most \(PasswordPolicy.maximumLength) characters")
        }
        guard let login, let password, body.errors.isEmpty else { return nil }
        (self.login, self.password) = (login, password)
    }
}

/// `POST /v1/auth/refresh`. Any string is read; one that cannot be a refresh token is
/// answered as an unknown one (`refresh_token_invalid`), not as a validation error.
struct RefreshBody: RequestBody {
    let refreshToken: String

    init?(reading body: inout JSONObjectReader, rules: Void) {
        guard let token = body.string("refresh_token") else { return nil }
        refreshToken = token
    }

    var isPlausible: Bool { refreshToken.hasPrefix("lr_rt_") && refreshToken.utf8.count <= 128 }
}

/// `PATCH /v1/me`: a new email (or null), and/or a new password. Changing a password is
/// confirmed by the current one (`password.current`), or by a fresh ID token of one of the
/// account's identities (`provider`, `id_token`, `nonce`); an account that has neither a
/// password nor an identity (a guest) sets its first password with `password.new` alone.
struct ProfileChange: RequestBody {
    struct Rules: Sendable {
        let username: String
        let minimumPasswordLength: Int
    }

    /// `.none`: keep; `.some(nil)`: remove.
    let email: String??
    /// The new password, and what confirms the change (`password.current` or an ID token).
    let password: (new: String, confirmation: Confirmation)?

    init?(reading body: inout JSONObjectReader, rules: Rules) {
        let changesEmail = body.contains("email")
        let email = body.string("email", required: false, nullable: true)
        if let email, let problem = AccountRules.emailProblem(email) { body.fail("email", problem) }
        var current: String?
        var new: String?
        if var password = body.object("password", required: false) {
            current = password.string("current", required: false)
            new = password.string("new")
            body.absorb(password)
        }
        if let new {
            for problem in PasswordPolicy.problems(new, username: rules.username, minimumLength: rules.minimumPasswordLength, field: "password.new") {
                body.fail(problem.field, problem.message)
            }
        }
        let idToken = IDTokenFields.readConfirmation(from: &body)
        guard body.errors.isEmpty else { return nil }
        self.email = changesEmail ? .some(email) : .none
        password = new.map { ($0, Confirmation(password: current, idToken: idToken)) }
    }
}

/// What confirms a change to an account's sign-in methods or its deletion: the password, or
/// a fresh ID token of one of the account's identities (`AccountService.confirm`); a guest
/// has neither and sends neither.
struct Confirmation: Sendable {
    let password: String?
    let idToken: IDTokenFields?

    /// Reads `password` and the ID token's fields from `body`, recording every problem.
    static func read(from body: inout JSONObjectReader) -> Confirmation {
        Confirmation(password: body.string("password", required: false), idToken: IDTokenFields.readConfirmation(from: &body))
    }
}

/// `DELETE /v1/me` and `DELETE /v1/me/identities/{provider}`: a `Confirmation`; a guest sends `{}`.
struct ConfirmationBody: RequestBody {
    let confirmation: Confirmation

    init?(reading body: inout JSONObjectReader, rules: Void) {
        confirmation = Confirmation.read(from: &body)
        guard body.errors.isEmpty else { return nil }
    }
}
