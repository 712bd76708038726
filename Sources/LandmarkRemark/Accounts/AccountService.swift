import Logging
import Postgres

/// The accounts' workflows: which transaction each runs in, and the steps that span stores
/// (a sign-up hashes, creates the user and its first session; a password change is
/// confirmed, then ends the other sessions). The stores only run statements on the
/// connection they are given; the controllers only translate HTTP.
struct AccountService: Sendable {
    let pool: PostgresPool
    let tenants: TenantStore
    let users: UserStore
    let sessions: SessionStore
    let login: LoginService
    let hashing: PasswordHashing
    let identities: IdentityService
    /// Verification codes for a new or changed email.
    let mail: AccountMail
    /// Forgets the tenant's kept tokens once a revocation here commits: it counts at once on
    /// this replica, and within the cache's age on the others (through migration 0045's epochs).
    let tokenCache: AccessTokenCache

    /// The active tenant an unauthenticated call names (`X-Tenant`).
    func tenant(named slug: String?, logger: Logger) async throws -> Tenant {
        try await tenants.active(named: slug, on: pool, logger: logger)
    }

    // MARK: - Sessions

    /// A new account with a password, and its first session.
    /// With an email, and a tenant that can mail, a verification code goes to it at once.
    func signup(_ body: SignupBody, in tenant: Tenant, userAgent: String?, languages: [String], logger: Logger) async throws -> TokenResponse {
        let hash = try await hashing.hash(body.password)
        let response = try await pool.withTenantTransaction(tenant.id, logger: logger) { connection in
            let user = try await users.create(tenantID: tenant.id, username: body.username, email: body.email, passwordHash: hash, on: connection)
            let tokens = try await sessions.create(tenantID: tenant.id, userID: user.id, userAgent: userAgent, on: connection)
            if let email = body.email { try await sendVerification(to: email, tenantID: tenant.id, userID: user.id, languages: languages, on: connection, logger: logger) }
            return TokenResponse(user: user, tokens: tokens)
        }
        mail.poke()
        return response
    }

    /// A new session for a user whose password checks out (throttled per account and address).
    func logIn(_ body: LoginBody, in tenant: Tenant, address: String, userAgent: String?, logger: Logger) async throws -> TokenResponse {
        let user = try await login.verifiedUser(tenantID: tenant.id, login: body.login, password: body.password, address: address, logger: logger)
        let tokens = try await pool.withTenantTransaction(tenant.id, logger: logger) { connection in
            try await sessions.create(tenantID: tenant.id, userID: user.id, userAgent: userAgent, on: connection)
        }
        return TokenResponse(user: user, tokens: tokens)
    }

    /// A new pair for a refresh token; a reused one has revoked its session (committed) before `401`.
    func refresh(_ body: RefreshBody, in tenant: Tenant, logger: Logger) async throws -> TokenResponse {
        guard body.isPlausible else { throw AccountError.refreshTokenInvalid }
        let outcome = try await pool.withTenantTransaction(tenant.id, logger: logger) { connection -> (SessionStore.RefreshOutcome, UserRecord?) in
            let outcome = try await sessions.refresh(tenantID: tenant.id, refreshToken: body.refreshToken, on: connection)
            guard case .issued(let userID, _) = outcome else { return (outcome, nil) }
            return (outcome, try await users.find(tenantID: tenant.id, id: userID, on: connection))
        }
        switch outcome {
        case (.issued(_, let tokens), let user?): return TokenResponse(user: user, tokens: tokens)
        case (.reused, _):
            tokenCache.forget(tenantID: tenant.id)
            throw AccountError.refreshTokenReused
        default: throw AccountError.refreshTokenInvalid
        }
    }

    /// Ends the caller's session, or all of the user's.
    func logOut(_ identity: Identity, everywhere: Bool, device: String? = nil, logger: Logger) async throws {
        try await pool.withTenantTransaction(identity.tenantID, logger: logger) { connection in
            if let device {
                try await DeviceStore().unregister(tenantID: identity.tenantID, userID: identity.userID, token: device, on: connection)
            }
            if everywhere {
                try await sessions.revokeAll(tenantID: identity.tenantID, userID: identity.userID, keeping: nil, reason: "logout_all", on: connection)
            } else {
                try await sessions.revoke(tenantID: identity.tenantID, sessionID: identity.sessionID, reason: "logout", on: connection)
            }
        }
        tokenCache.forget(tenantID: identity.tenantID)
    }

    // MARK: - The caller's account

    /// `GET /v1/me`'s document.
    func me(_ identity: Identity, logger: Logger) async throws -> Me {
        try await pool.withTenantTransaction(identity.tenantID, logger: logger) { try await me(identity, on: $0) }
    }

    /// Accepts the tenant's terms: `version` must be the current one.
    func acceptTerms(_ version: String, for identity: Identity, logger: Logger) async throws -> Me {
        try await pool.withTenantTransaction(identity.tenantID, logger: logger) { connection in
            let current = try await tenants.termsVersion(tenantID: identity.tenantID, on: connection)
            guard let current, current == version else { throw TenantError.notTheCurrentTerms(current: current) }
            try await users.acceptTerms(tenantID: identity.tenantID, id: identity.userID, version: version, on: connection)
            return try await me(identity, on: connection)
        }
    }

    /// `GET /v1/me`'s document, inside a transaction that changed the account.
    func me(_ identity: Identity, on connection: PostgresConnection) async throws -> Me {
        guard var me = try await users.me(tenantID: identity.tenantID, id: identity.userID, on: connection) else {
            throw AccountError.sessionEnded
        }
        me.identities = try await identities.store.identities(tenantID: identity.tenantID, userID: identity.userID, on: connection)
        return me
    }

    /// What a profile change is checked against: the caller's name and the tenant's password rule.
    func changeRules(for identity: Identity, logger: Logger) async throws -> ProfileChange.Rules {
        guard let tenant = try await tenants.find(id: identity.tenantID, on: pool, logger: logger) else { throw AccountError.sessionEnded }
        return ProfileChange.Rules(username: identity.username, minimumPasswordLength: tenant.minPasswordLength)
    }

    /// Changes email and/or password. A password change is confirmed and ends every other session.
    ///
    /// A new email replaces one the account has only once the code mailed to the new address
    /// comes back (`pending_email` until then), and the old address is told; an account without
    /// an email, or a tenant that cannot mail, takes it at once (unverified).
    func change(_ identity: Identity, to change: ProfileChange, address: String, languages: [String], logger: Logger) async throws -> Me {
        var newHash: String?
        if let password = change.password {
            try await confirm(identity, with: password.confirmation, address: address, logger: logger)
            newHash = try await hashing.hash(password.new)
        }
        let changed = try await pool.withTenantTransaction(identity.tenantID, logger: logger) { connection in
            if case .some(let email) = change.email {
                try await changeEmail(identity, to: email, address: address, languages: languages, on: connection, logger: logger)
            }
            if change.timeZone != nil || change.quietHours != nil {
                guard try await users.updateQuietHours(
                    tenantID: identity.tenantID, id: identity.userID, timeZone: change.timeZone, quietHours: change.quietHours, on: connection)
                else { throw AppError.validation(field: "time_zone", "is not a time zone this service knows (an IANA name like Europe/Paris)") }
            }
            if let newHash {
                try await users.updatePasswordHash(tenantID: identity.tenantID, id: identity.userID, hash: newHash, on: connection)
                try await sessions.revokeAll(
                    tenantID: identity.tenantID, userID: identity.userID, keeping: identity.sessionID, reason: "password_changed", on: connection)
            }
            return try await me(identity, on: connection)
        }
        if newHash != nil { tokenCache.forget(tenantID: identity.tenantID) }
        mail.poke()
        return changed
    }

    private func changeEmail(
        _ identity: Identity, to new: String?, address: String, languages: [String], on connection: PostgresConnection, logger: Logger
    ) async throws {
        let (tenantID, userID) = (identity.tenantID, identity.userID)
        guard let user = try await users.mailFacts(tenantID: tenantID, id: userID, on: connection) else { throw AccountError.sessionEnded }
        guard let new else {
            // Removing the email ends a change waiting on a new one too.
            try await users.updateEmail(tenantID: tenantID, id: userID, email: nil, on: connection)
            try await mail.codes?.endAll(.verifyEmail, tenantID: tenantID, userID: userID, now: mail.clock.now(), on: connection)
            return
        }
        let settings = try? await mail.settings(tenantID: tenantID, on: connection, logger: logger).0
        guard let settings, let old = user.email, old.lowercased() != new.lowercased() else {
            try await users.updateEmail(tenantID: tenantID, id: userID, email: new, on: connection)
            if user.email?.lowercased() != new.lowercased() {
                try await sendVerification(to: new, tenantID: tenantID, userID: userID, languages: languages, on: connection, logger: logger)
            }
            return
        }
        // Taken by another account: said now, not after the code came back.
        if try await users.emailTaken(new, tenantID: tenantID, except: userID, on: connection) { throw AccountError.emailTaken }
        let now = mail.clock.now()
        try await mail.limits.take(recipient: new, address: address, tenantID: tenantID, now: now, on: connection)
        _ = try await mail.sendCode(.verifyEmail, to: new, user: user, mail: settings, languages: languages, now: now, on: connection)
        try await mail.sendNotice(.emailChangeNotice, to: old, user: user, mail: settings, languages: languages, values: ["email": new], now: now, on: connection)
    }

    /// A verification code to `email` when the tenant can mail and the address is under its limit.
    private func sendVerification(
        to email: String, tenantID: Int64, userID: Int64, languages: [String], on connection: PostgresConnection, logger: Logger
    ) async throws {
        guard let settings = try? await mail.settings(tenantID: tenantID, on: connection, logger: logger).0,
            let user = try await users.mailFacts(tenantID: tenantID, id: userID, on: connection)
        else { return }
        let now = mail.clock.now()
        guard try await mail.limits.takeRecipient(email, tenantID: tenantID, now: now, on: connection) == nil else { return }
        _ = try await mail.sendCode(.verifyEmail, to: email, user: user, mail: settings, languages: languages, now: now, on: connection)
    }

    /// Deletes the account once confirmed; sessions, notes and identities go with it, and
    /// Apple's refresh tokens are revoked at Apple (App Store rule 5.1.1(v)).
    func delete(_ identity: Identity, confirmedBy confirmation: ChangeConfirmation, address: String, logger: Logger) async throws {
        try await confirm(identity, with: confirmation, address: address, logger: logger)
        let appleTokens = try await pool.withTenantTransaction(identity.tenantID, logger: logger) { connection in
            let tokens = try await identities.store.appleTokens(tenantID: identity.tenantID, userID: identity.userID, on: connection)
            try await users.delete(tenantID: identity.tenantID, id: identity.userID, on: connection)
            return tokens
        }
        tokenCache.forget(tenantID: identity.tenantID)
        await identities.revoke(appleTokens, tenantID: identity.tenantID, logger: logger)
    }

    /// Another user's public profile; `404` for a user who is not there.
    func profile(of username: String, for identity: Identity, logger: Logger) async throws -> PublicProfile {
        let profile = try await pool.withTenantTransaction(identity.tenantID, logger: logger) { connection in
            try await users.publicProfile(tenantID: identity.tenantID, username: username, viewerID: identity.userID, on: connection)
        }
        guard let profile else { throw AccountError.userNotFound }
        return profile
    }

    /// Confirms a sensitive change (a password change, linking or unlinking a sign-in method,
    /// deleting the account): by the password (a wrong one is `401` and counts as a failed
    /// login), or by a fresh ID token of one of the account's own identities. An account with
    /// neither (a guest) has nothing to confirm with, and its access token is enough; any
    /// other account without a confirmation is `422`.
    func confirm(_ identity: Identity, with confirmation: ChangeConfirmation, address: String, logger: Logger) async throws {
        if let password = confirmation.password {
            _ = try await login.verifiedUser(tenantID: identity.tenantID, login: identity.username, password: password, address: address, logger: logger)
        } else if let token = confirmation.idToken {
            try await identities.reauthenticate(identity, provider: token.provider, idToken: token.idToken, nonce: token.nonce, logger: logger)
        } else {
            let methods = try await pool.withTenantTransaction(identity.tenantID, logger: logger) { connection in
                try await identities.store.signInMethods(tenantID: identity.tenantID, userID: identity.userID, on: connection)
            }
            guard !methods.hasPassword && methods.providers.isEmpty else { throw IdentityError.reauthenticationRequired }
        }
    }
}
