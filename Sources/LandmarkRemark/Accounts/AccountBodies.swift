/// `POST /v1/auth/signup`.
struct SignupBody: RequestBody {
    let username: String
    let password: String
    let email: String?

    init?(reading body: inout JSONObjectReader, rules tenant: Tenant) {
        let request = SignupRequest(reading: &body)
        email = request.email ?? nil
        if let username = request.username, let problem = Username.problem(username) { body.fail("username", problem) }
        if let email, let problem = AccountRules.emailProblem(email) { body.fail("email", problem) }
        if let password = request.password {
            let problems = PasswordPolicy.problems(
                password, username: request.username ?? "", minimumLength: tenant.minPasswordLength, field: "password")
            for problem in problems { body.fail(problem.field, problem.message) }
        }
        guard let username = request.username, let password = request.password, body.errors.isEmpty else { return nil }
        (self.username, self.password) = (username, password)
    }
}

/// `POST /v1/auth/login`: `username` is a username or an email.
struct LoginBody: RequestBody {
    let login: String
    let password: String

    init?(reading body: inout JSONObjectReader, rules: Void) {
        let request = LoginRequest(reading: &body)
        if let login = request.username, login.isEmpty || login.unicodeScalars.count > 254 {
            body.fail("username", "must be 1 to 254 characters")
        }
        if let password = request.password, password.unicodeScalars.count > PasswordPolicy.maximumLength {
            body.fail("password", "must be at most \(PasswordPolicy.maximumLength) characters")
        }
        guard let login = request.username, let password = request.password, body.errors.isEmpty else { return nil }
        (self.login, self.password) = (login, password)
    }
}

/// `POST /v1/auth/refresh`. Any string is read; one that cannot be a refresh token is
/// answered as an unknown one (`refresh_token_invalid`), not as a validation error.
struct RefreshBody: RequestBody {
    let refreshToken: String

    init?(reading body: inout JSONObjectReader, rules: Void) {
        guard let token = RefreshRequest(reading: &body).refreshToken else { return nil }
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
    /// The time zone quiet hours are in, as given (PostgreSQL checks the name); `.some(nil)`: UTC.
    let timeZone: String??
    /// The quiet hours, `HH:MM` each; `.some(nil)`: none.
    let quietHours: (start: String, end: String)??
    /// The new password, and what confirms the change (`password.current` or an ID token).
    let password: (new: String, confirmation: ChangeConfirmation)?

    init?(reading body: inout JSONObjectReader, rules: Rules) {
        let request = UpdateMeRequest(reading: &body)
        if let email = request.email ?? nil, let problem = AccountRules.emailProblem(email) { body.fail("email", problem) }
        let new = request.password?.new
        if let new {
            let problems = PasswordPolicy.problems(
                new, username: rules.username, minimumLength: rules.minimumPasswordLength, field: "password.new")
            for problem in problems { body.fail(problem.field, problem.message) }
        }
        let idToken = IDTokenFields.confirming(provider: request.provider, idToken: request.idToken, nonce: request.nonce, in: &body)
        if let zone = request.timeZone ?? nil, !Self.isZoneName(zone) {
            body.fail("time_zone", "must be an IANA time zone like Europe/Paris")
        }
        var quiet: (start: String, end: String)?? = .none
        if let window = request.quietHours {
            quiet = .some(nil)
            if let window {
                let parts = window.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
                if parts.count == 2, parts.allSatisfy(Self.isClockTime), parts[0] != parts[1] {
                    quiet = .some((parts[0], parts[1]))
                } else {
                    body.fail("quiet_hours", "must be HH:MM-HH:MM on a 24-hour clock, start and end different, like 22:00-07:00")
                }
            }
        }
        guard body.errors.isEmpty else { return nil }
        email = request.email
        timeZone = request.timeZone
        quietHours = quiet
        password = new.map { ($0, ChangeConfirmation(password: request.password?.current, idToken: idToken)) }
    }
}

extension ProfileChange {
    /// `Area/City` and the like: letters, digits, `/`, `_`, `+`, `-`; whether the database knows
    /// it is asked when it is stored.
    static func isZoneName(_ text: String) -> Bool {
        (1...64).contains(text.utf8.count)
            && text.utf8.allSatisfy { $0 < 128 && (Character(UnicodeScalar($0)).isLetter || Character(UnicodeScalar($0)).isNumber || "/_+-".utf8.contains($0)) }
    }

    /// `HH:MM`, 00:00 to 23:59.
    static func isClockTime(_ text: String) -> Bool {
        let digits = Array(text.utf8)
        guard digits.count == 5, digits[2] == UInt8(ascii: ":"), let hours = Int(text.prefix(2)), let minutes = Int(text.suffix(2)),
            digits[0..<2].allSatisfy({ (48...57).contains($0) }), digits[3..<5].allSatisfy({ (48...57).contains($0) })
        else { return false }
        return hours < 24 && minutes < 60
    }
}

/// What confirms a change to an account's sign-in methods or its deletion: the password, or
/// a fresh ID token of one of the account's identities (`AccountService.confirm`); a guest
/// has neither and sends neither.
struct ChangeConfirmation: Sendable {
    let password: String?
    let idToken: IDTokenFields?

    /// The confirmation a `Confirmation` object carries, its problems recorded in `body`
    /// (under `prefix` when the object is nested, as `confirm` is).
    init(_ request: Confirmation, in body: inout JSONObjectReader, prefix: String = "") {
        password = request.password
        idToken = IDTokenFields.confirming(
            provider: request.provider, idToken: request.idToken, nonce: request.nonce, in: &body, prefix: prefix)
    }

    init(password: String?, idToken: IDTokenFields?) {
        (self.password, self.idToken) = (password, idToken)
    }

    /// Nothing confirms the change: enough for a guest only.
    static let unconfirmed = ChangeConfirmation(password: nil, idToken: nil)
}

/// `DELETE /v1/me` and `DELETE /v1/me/identities/{provider}`: a `Confirmation`; a guest sends `{}`.
struct ConfirmationBody: RequestBody {
    let confirmation: ChangeConfirmation

    init?(reading body: inout JSONObjectReader, rules: Void) {
        confirmation = ChangeConfirmation(Confirmation(reading: &body), in: &body)
        guard body.errors.isEmpty else { return nil }
    }
}

/// A validated `POST /v1/me/terms` body.
struct TermsAcceptance: RequestBody, Equatable {
    let version: String

    init?(reading reader: inout JSONObjectReader, rules: Void) {
        let request = AcceptTermsRequest(reading: &reader)
        guard let version = request.version, reader.errors.isEmpty else { return nil }
        guard (1...100).contains(version.count) else {
            reader.fail("version", "must be 1 to 100 characters")
            return nil
        }
        self.version = version
    }
}
