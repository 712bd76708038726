import Logging
import Postgres

/// Verifying an account's email, and changing it: a code goes to the address, and the address
/// counts as the account's (verified) once the code or its link comes back.
struct EmailVerificationService: Sendable {
    let pool: PostgresPool
    let users: UserStore
    let mail: AccountMail

    /// Mails a code to the account's email, or to the address a change waits on.
    func request(_ identity: Identity, languages: [String], address: String, logger: Logger) async throws -> EmailVerificationSent {
        let sent = try await pool.withTenantTransaction(identity.tenantID, logger: logger) { connection in
            let now = mail.clock.now()
            let (settings, _, _) = try await mail.settings(tenantID: identity.tenantID, on: connection, logger: logger)
            guard let user = try await users.mailFacts(tenantID: identity.tenantID, id: identity.userID, on: connection) else {
                throw AccountError.sessionEnded
            }
            let target: String
            if let pending = user.pendingEmail {
                target = pending
            } else if let email = user.email {
                guard !user.verified else { throw RecoveryError.alreadyVerified }
                target = email
            } else {
                throw RecoveryError.noEmail
            }
            try await mail.limits.take(recipient: target, address: address, tenantID: identity.tenantID, now: now, on: connection)
            let issued = try await mail.sendCode(.verifyEmail, to: target, user: user, mail: settings, languages: languages, now: now, on: connection)
            return EmailVerificationSent(email: target, expiresAt: issued.codeExpiresAt)
        }
        mail.poke()
        return sent
    }

    /// Marks the address of a code (the caller's) or a link (anyone's who has it) verified; a
    /// changed address becomes the account's email.
    func verify(_ proof: VerifyEmailBody.Proof, identity: Identity?, logger: Logger) async throws -> EmailVerified {
        // Without a data key no code was ever made: whatever was sent is not one.
        guard let codes = mail.codes else { throw RecoveryError.invalidCode }
        let tenantID: Int64
        switch proof {
        case .code: guard let identity else { throw AppError.unauthenticated }; tenantID = identity.tenantID
        case .link(let token): tenantID = AccountCodes.tenant(ofLink: token) ?? 0
        }
        // A wrong code's failure is committed before the client hears 422.
        let outcome = try await pool.withTenantTransaction(tenantID, logger: logger) { connection -> Result<EmailVerified, RecoveryError> in
            let now = mail.clock.now()
            let check: AccountCodes.Check
            switch proof {
            case .code(let code):
                check = try await codes.check(code: code, .verifyEmail, tenantID: tenantID, userID: identity!.userID, now: now, on: connection)
            case .link(let token):
                check = try await codes.check(link: token, .verifyEmail, tenantID: tenantID, now: now, on: connection)
            }
            switch check {
            case .wrong: return .failure(.invalidCode)
            case .dead: return .failure(.codeExpired)
            case .valid(let id, let userID, let email):
                try await users.setVerifiedEmail(tenantID: tenantID, id: userID, email: email, now: now, on: connection)
                try await codes.use(id: id, tenantID: tenantID, now: now, on: connection)
                return .success(EmailVerified(email: email, emailVerified: true))
            }
        }
        return try outcome.get()
    }
}
