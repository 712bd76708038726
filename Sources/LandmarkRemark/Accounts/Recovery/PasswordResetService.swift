import Foundation
import Logging
import Postgres
import ServiceLifecycle

/// Password reset by a code or link mailed to the account's verified email.
///
/// Asking (`forgot`) does the same work whatever the login names, and answers before looking:
/// the client address is counted, the request is queued, and `202` goes out. The queue's
/// worker then looks the account up and, for a verified email under its limit, writes the
/// code and its message. So neither the answer nor its time says whether an account exists.
final class PasswordResetService: Service, Sendable {
    let pool: PostgresPool
    let users: UserStore
    let sessions: SessionStore
    let hashing: PasswordHashing
    let mail: AccountMail
    /// Forgets the tenant's kept tokens once a reset has ended the account's sessions.
    let tokenCache: AccessTokenCache
    private let requests: AsyncStream<Request>
    private let queue: AsyncStream<Request>.Continuation

    struct Request: Sendable {
        let tenantID: Int64
        let login: String
        let languages: [String]
    }

    init(pool: PostgresPool, users: UserStore, sessions: SessionStore, hashing: PasswordHashing, mail: AccountMail, tokenCache: AccessTokenCache) {
        self.pool = pool
        self.tokenCache = tokenCache
        self.users = users
        self.sessions = sessions
        self.hashing = hashing
        self.mail = mail
        // Bounded: a flood past the per-address limits drops requests rather than memory.
        (requests, queue) = AsyncStream.makeStream(bufferingPolicy: .bufferingOldest(10_000))
    }

    /// Counts the client address and queues the request; the caller answers `202` whatever the login.
    func forgot(_ body: ForgotPasswordBody, in tenant: Tenant, address: String, languages: [String], logger: Logger) async throws {
        try await pool.withTenantTransaction(tenant.id, logger: logger) { connection in
            if let wait = try await mail.limits.takeAddress(address, tenantID: tenant.id, now: mail.clock.now(), on: connection) {
                throw RecoveryError.tooMuchMail(retryAfter: wait)
            }
        }
        if case .dropped = queue.yield(Request(tenantID: tenant.id, login: body.login, languages: languages)) {
            logger.warning("password reset requests queue full: a request was dropped")
        }
    }

    /// Works the queue for the life of the service.
    func run() async throws {
        await withGracefulShutdownHandler {
            for await request in requests {
                await sendTrying(request, logger: Logger(label: "landmark-remark.reset"))
            }
        } onGracefulShutdown: {
            self.queue.finish()
        }
    }

    /// Delays before each further try of a request that failed (a statement timeout or a lost
    /// connection while the database is busy): the person waiting for the mail was told `202`,
    /// and their request must not vanish with a passing error. Each try is one transaction
    /// that wrote nothing when it failed, so trying again sends at most one mail.
    static let retryDelays: [Duration] = [.seconds(1), .seconds(3), .seconds(9)]

    private func sendTrying(_ request: Request, logger: Logger) async {
        for delay in Self.retryDelays + [nil] {
            do {
                try await send(request, logger: logger)
                return
            } catch {
                guard let delay, !Task.isCancelled else {
                    logger.error("a password reset request failed", metadata: ["error": "\(error)"])
                    return
                }
                logger.warning("a password reset request failed; trying again", metadata: ["error": "\(error)", "in": "\(delay)"])
                try? await Task.sleep(for: delay)
            }
        }
    }

    /// Writes a reset code to the account's email when it is verified and under its limit.
    func send(_ request: Request, logger: Logger) async throws {
        let sent = try await pool.withTenantTransaction(request.tenantID, logger: logger) { connection -> Bool in
            let now = mail.clock.now()
            let settings: TenantMail
            do {
                (settings, _, _) = try await mail.settings(tenantID: request.tenantID, on: connection, logger: logger)
            } catch RecoveryError.mailNotConfigured {
                return false
            }
            guard let user = try await users.mailFacts(tenantID: request.tenantID, login: request.login, on: connection),
                let email = user.email, user.verified,
                try await mail.limits.takeRecipient(email, tenantID: request.tenantID, now: now, on: connection) == nil
            else { return false }
            _ = try await mail.sendCode(.resetPassword, to: email, user: user, mail: settings, languages: request.languages, now: now, on: connection)
            return true
        }
        if sent { mail.poke() }
    }

    /// Sets the new password with a code or link: every session ends, the other reset codes
    /// end, the owner gets a notice, and the caller a new session.
    func reset(_ body: ResetPasswordBody, tenant named: Tenant?, userAgent: String?, languages: [String], logger: Logger) async throws -> TokenResponse {
        // Without a data key no code was ever made: whatever was sent is not one.
        guard let codes = mail.codes else { throw RecoveryError.invalidCode }
        let tenantID: Int64
        switch body.proof {
        case .code: guard let named else { throw TenantError.headerMissing }; tenantID = named.id
        case .link(let token): tenantID = AccountCodes.tenant(ofLink: token) ?? 0
        }
        // First find whose code it is (committing a wrong code's failure), then hash outside any
        // transaction, then check the code again and use it.
        let found = try await pool.withTenantTransaction(tenantID, logger: logger) { connection -> Result<(Int64, UserRecord, Int), RecoveryError> in
            switch try await check(body, codes: codes, tenantID: tenantID, on: connection) {
            case .wrong: return .failure(.invalidCode)
            case .dead: return .failure(.codeExpired)
            case .valid(let id, let userID, _):
                guard let user = try await users.find(tenantID: tenantID, id: userID, on: connection) else { return .failure(.invalidCode) }
                let minimum = try await connection.query("SELECT min_password_length FROM tenants WHERE id = \(tenantID)")[0].decode(Int.self)
                return .success((id, user, minimum))
            }
        }
        let (codeID, user, minimumLength) = try found.get()
        let problems = PasswordPolicy.problems(body.newPassword, username: user.username, minimumLength: minimumLength, field: "new_password")
        guard problems.isEmpty else { throw AppError.validation(problems) }
        let hash = try await hashing.hash(body.newPassword)
        let tokens = try await pool.withTenantTransaction(tenantID, logger: logger) { connection -> IssuedTokens in
            let now = mail.clock.now()
            guard case .valid(codeID, user.id, let email) = try await check(body, codes: codes, tenantID: tenantID, on: connection) else {
                throw RecoveryError.codeExpired
            }
            try await users.updatePasswordHash(tenantID: tenantID, id: user.id, hash: hash, on: connection)
            try await codes.endAll(.resetPassword, tenantID: tenantID, userID: user.id, now: now, on: connection)
            try await sessions.revokeAll(tenantID: tenantID, userID: user.id, keeping: nil, reason: "password_reset", on: connection)
            if let settings = try? await mail.settings(tenantID: tenantID, on: connection, logger: logger).0,
                let facts = try await users.mailFacts(tenantID: tenantID, id: user.id, on: connection)
            {
                try await mail.sendNotice(.passwordChangedNotice, to: email, user: facts, mail: settings, languages: languages, now: now, on: connection)
            }
            return try await sessions.create(tenantID: tenantID, userID: user.id, userAgent: userAgent, on: connection)
        }
        tokenCache.forget(tenantID: tenantID)
        mail.poke()
        return TokenResponse(user: user, tokens: tokens)
    }

    private func check(_ body: ResetPasswordBody, codes: AccountCodes, tenantID: Int64, on connection: PostgresConnection) async throws -> AccountCodes.Check {
        let now = mail.clock.now()
        switch body.proof {
        case .link(let token):
            return try await codes.check(link: token, .resetPassword, tenantID: tenantID, now: now, on: connection)
        case .code(let code):
            // No account by that login is a wrong code, as far as the caller can tell.
            guard let login = body.login, let user = try await users.mailFacts(tenantID: tenantID, login: login, on: connection) else {
                return .wrong
            }
            return try await codes.check(code: code, .resetPassword, tenantID: tenantID, userID: user.id, now: now, on: connection)
        }
    }
}
