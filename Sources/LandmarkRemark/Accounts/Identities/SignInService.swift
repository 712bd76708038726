import Logging
import Postgres

/// The workflows of signing in with an ID token or as a guest, and of linking and
/// unlinking sign-in methods: which transaction each runs in, and the steps across
/// `IdentityStore`, `UserStore` and `SessionStore` (see `AccountService`). Verifying tokens,
/// keeping and revoking Apple's is `IdentityService`'s; `IdentityController` translates HTTP.
struct SignInService: Sendable {
    let accounts: AccountService
    let guestsPerAddressPerHour: Int

    private var identities: IdentityService { accounts.identities }
    private var store: IdentityStore { accounts.identities.store }

    /// Signs in the account of the token's `(provider, sub)`, making it on first sign-in
    /// (`created`).
    func signIn(_ body: IDTokenBody, in tenant: Tenant, userAgent: String?, logger: Logger) async throws -> (TokenResponse, created: Bool) {
        let (provider, token) = try await identities.verify(
            tenantID: tenant.id, provider: body.token.provider, idToken: body.token.idToken, nonce: body.token.nonce, logger: logger)
        // Two first sign-ins of one identity at once (a double tap) both find no account; the
        // second then clashes with the first: on the identity's link, or, when the app passed
        // the username the user chose (as Apple's first sign-in makes apps do), on that name,
        // which the first just took. Its second attempt finds the identity's account and signs
        // in to it, whatever the name. A name taken by someone else is refused again then; a
        // derived one taken meanwhile is chosen afresh.
        for attempt in 1...2 {
            do {
                let outcome = try await signIn(body, provider: provider, token: token, tenant: tenant, userAgent: userAgent, logger: logger)
                // Only once the sign-in stands: Apple's code is good once, and a refused sign-in
                // (a taken username, a replay) must leave it unspent.
                await identities.keepAppleToken(code: body.authorizationCode, provider: provider, token: token, tenantID: tenant.id, logger: logger)
                return outcome
            } catch IdentityError.identityTaken where attempt == 1 {
            } catch AccountError.usernameTaken where attempt == 1 {
            } catch IdentityError.usernameTaken where attempt == 1 && body.username != nil {
            }
        }
        preconditionFailure("unreachable")
    }

    private func signIn(
        _ body: IDTokenBody, provider: IdentityProvider, token: VerifiedIDToken, tenant: Tenant, userAgent: String?, logger: Logger
    ) async throws -> (TokenResponse, created: Bool) {
        try await accounts.pool.withTenantTransaction(tenant.id, logger: logger) { connection in
            try await store.spend(tenantID: tenant.id, token: token, on: connection)
            let user: UserRecord
            let created: Bool
            if let owner = try await store.owner(tenantID: tenant.id, provider: provider.name, subject: token.subject, on: connection) {
                guard !owner.disabled, let found = try await accounts.users.find(tenantID: tenant.id, id: owner.userID, on: connection)
                else { throw IdentityError.accountDisabled }
                try await store.touch(tenantID: tenant.id, provider: provider.name, token: token, on: connection)
                (user, created) = (found, false)
            } else {
                let username = try await newUsername(chosen: body.username, token: token, tenantID: tenant.id, on: connection)
                user = try await accounts.users.create(tenantID: tenant.id, username: username, email: nil, passwordHash: nil, on: connection)
                try await store.link(tenantID: tenant.id, userID: user.id, provider: provider.name, token: token, on: connection)
                created = true
            }
            let tokens = try await accounts.sessions.create(tenantID: tenant.id, userID: user.id, userAgent: userAgent, on: connection)
            return (TokenResponse(user: user, tokens: tokens), created)
        }
    }

    /// A guest account: a generated username, no password; a few per client address per hour
    /// (IPv6 by its /64, as failed logins are counted).
    func guest(in tenant: Tenant, address: String, userAgent: String?, logger: Logger) async throws -> TokenResponse {
        guard tenant.guestsEnabled else { throw IdentityError.guestsDisabled }
        return try await accounts.pool.withTenantTransaction(tenant.id, logger: logger) { connection in
            let (count, secondsLeft) = try await store.countGuest(tenantID: tenant.id, address: LoginThrottle.addressKey(address), on: connection)
            guard count <= guestsPerAddressPerHour else { throw IdentityError.tooManyGuests(retryAfter: max(1, secondsLeft)) }
            let user = try await accounts.users.create(
                tenantID: tenant.id, username: UsernameCandidates.guest(), email: nil, passwordHash: nil, guest: true, on: connection)
            let tokens = try await accounts.sessions.create(tenantID: tenant.id, userID: user.id, userAgent: userAgent, on: connection)
            return TokenResponse(user: user, tokens: tokens)
        }
    }

    /// Adds a sign-in method to the caller's account (`created`: false when it was linked
    /// already), confirmed as a password change is: a stolen access token must not add a way in.
    func link(_ body: IDTokenBody, to identity: Identity, address: String, logger: Logger) async throws -> (Me, created: Bool) {
        try await accounts.confirm(identity, with: body.confirmation, address: address, logger: logger)
        let (provider, token) = try await identities.verify(
            tenantID: identity.tenantID, provider: body.token.provider, idToken: body.token.idToken, nonce: body.token.nonce, logger: logger)
        let outcome = try await accounts.pool.withTenantTransaction(identity.tenantID, logger: logger) { connection in
            try await store.spend(tenantID: identity.tenantID, token: token, on: connection)
            let owner = try await store.owner(tenantID: identity.tenantID, provider: provider.name, subject: token.subject, on: connection)
            switch owner?.userID {
            case identity.userID?: break
            case .some: throw IdentityError.identityTaken
            case nil: try await store.link(tenantID: identity.tenantID, userID: identity.userID, provider: provider.name, token: token, on: connection)
            }
            return (try await accounts.me(identity, on: connection), created: owner == nil)
        }
        await identities.keepAppleToken(code: body.authorizationCode, provider: provider, token: token, tenantID: identity.tenantID, logger: logger)
        return outcome
    }

    /// Removes a sign-in method, confirmed, unless it is the account's last; Apple's token is revoked.
    func unlink(_ provider: String, from identity: Identity, confirmedBy confirmation: ChangeConfirmation, address: String, logger: Logger) async throws {
        guard IdentityProvider.nameProblem(provider) == nil else { throw IdentityError.notLinked }
        try await accounts.confirm(identity, with: confirmation, address: address, logger: logger)
        let appleToken = try await accounts.pool.withTenantTransaction(identity.tenantID, logger: logger) { connection in
            // Locks the user's row: two unlinks at once cannot both pass the last-method check.
            let methods = try await store.signInMethods(tenantID: identity.tenantID, userID: identity.userID, on: connection)
            guard methods.providers.contains(provider) else { throw IdentityError.notLinked }
            guard methods.hasPassword || methods.providers.count > 1 else { throw IdentityError.lastSignInMethod }
            return try await store.unlink(tenantID: identity.tenantID, userID: identity.userID, provider: provider, on: connection)
        }
        if case .some(.some(let sealed)) = appleToken {
            await identities.revoke([sealed], tenantID: identity.tenantID, logger: logger)
        }
    }

    /// The chosen username if free (else `409` with a free suggestion), or one derived from the token.
    private func newUsername(chosen: String?, token: VerifiedIDToken, tenantID: Int64, on connection: PostgresConnection) async throws -> String {
        if let chosen {
            guard try await store.firstFreeUsername(tenantID: tenantID, candidates: [chosen], on: connection) != nil else {
                let suggestion = try await store.firstFreeUsername(
                    tenantID: tenantID, candidates: Array(UsernameCandidates.alternatives(to: chosen).dropFirst()), on: connection)
                throw IdentityError.usernameTaken(suggestion: suggestion)
            }
            return chosen
        }
        let candidates = UsernameCandidates.derived(name: token.name)
        return try await store.firstFreeUsername(tenantID: tenantID, candidates: candidates, on: connection)
            ?? UsernameCandidates.random(prefix: "user-")
    }
}
