import Hummingbird
import Postgres

/// `POST /v1/auth/id-token` and `/v1/auth/guest` (tenant from `X-Tenant`), and
/// `POST /v1/me/identities`, `DELETE /v1/me/identities/{provider}` for a signed-in user.
struct IdentityController {
    let accounts: AccountService
    let guestsPerAddressPerHour: Int
    let bodyLimit: Int

    var signInEndpoints: RouteCollection<AppRequestContext> {
        RouteCollection(context: AppRequestContext.self)
            .post("id-token", use: signIn)
            .post("guest", use: guest)
    }

    var identityEndpoints: RouteCollection<AppRequestContext> {
        RouteCollection(context: AppRequestContext.self)
            .post(use: link)
            .delete(":provider", use: unlink)
    }

    private var identities: IdentityService { accounts.identities }

    /// Signs in the account of the token's `(provider, sub)`, making it on first sign-in (`201`).
    @Sendable func signIn(_ request: Request, context: AppRequestContext) async throws -> EditedResponse<TokenResponse> {
        var request = request
        let tenant = try await accounts.tenant(named: request.headers[.xTenant], logger: context.logger)
        context.tenantTag.set(tenant.slug)
        let body = try await request.decode(IDTokenBody.self, rules: .signIn, context: context, limit: bodyLimit)
        let (provider, token) = try await identities.verify(
            tenantID: tenant.id, provider: body.token.provider, idToken: body.token.idToken, nonce: body.token.nonce, logger: context.logger)
        // Two first sign-ins of one identity at once (a double tap) both find no account; the
        // second's link then clashes with the first's. Its second attempt signs in to that
        // account. A derived username taken meanwhile is likewise chosen afresh.
        for attempt in 1...2 {
            do {
                let response = try await signIn(
                    body, provider: provider, token: token, tenant: tenant, userAgent: request.headers[.userAgent], context: context)
                // Only once the sign-in stands: Apple's code is good once, and a refused sign-in
                // (a taken username, a replay) must leave it unspent.
                await identities.keepAppleToken(
                    code: body.authorizationCode, provider: provider, token: token, tenantID: tenant.id, logger: context.logger)
                return response
            } catch IdentityError.identityTaken where attempt == 1 {
            } catch AccountError.usernameTaken where attempt == 1 && body.username == nil {
            }
        }
        preconditionFailure("unreachable")
    }

    private func signIn(
        _ body: IDTokenBody, provider: IdentityProvider, token: VerifiedIDToken, tenant: Tenant, userAgent: String?,
        context: AppRequestContext
    ) async throws -> EditedResponse<TokenResponse> {
        let store = identities.store
        let (response, created) = try await accounts.pool.withTenantTransaction(tenant.id, logger: context.logger) { connection in
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
        return EditedResponse(status: created ? .created : .ok, response: response)
    }

    /// A guest account: a generated username, no password; a few per client address per hour
    /// (IPv6 by its /64, as failed logins are counted).
    @Sendable func guest(_ request: Request, context: AppRequestContext) async throws -> EditedResponse<TokenResponse> {
        let tenant = try await accounts.tenant(named: request.headers[.xTenant], logger: context.logger)
        context.tenantTag.set(tenant.slug)
        guard tenant.guestsEnabled else { throw IdentityError.guestsDisabled }
        let userAgent = request.headers[.userAgent]
        let response = try await accounts.pool.withTenantTransaction(tenant.id, logger: context.logger) { connection in
            let (count, secondsLeft) = try await identities.store.countGuest(
                tenantID: tenant.id, address: LoginThrottle.addressKey(context.clientAddress), on: connection)
            guard count <= guestsPerAddressPerHour else { throw IdentityError.tooManyGuests(retryAfter: max(1, secondsLeft)) }
            let user = try await accounts.users.create(
                tenantID: tenant.id, username: UsernameCandidates.guest(), email: nil, passwordHash: nil, guest: true, on: connection)
            let tokens = try await accounts.sessions.create(tenantID: tenant.id, userID: user.id, userAgent: userAgent, on: connection)
            return TokenResponse(user: user, tokens: tokens)
        }
        return EditedResponse(status: .created, response: response)
    }

    /// Adds a sign-in method to the caller's account (`201`; `200` when it was linked already),
    /// confirmed as a password change is: a stolen access token must not add a way in.
    @Sendable func link(_ request: Request, context: AppRequestContext) async throws -> EditedResponse<Me> {
        var request = request
        let identity = try context.requireIdentity()
        let body = try await request.decode(IDTokenBody.self, rules: .link, context: context, limit: bodyLimit)
        try await accounts.confirm(identity, with: body.confirmation, address: context.clientAddress, logger: context.logger)
        let (provider, token) = try await identities.verify(
            tenantID: identity.tenantID, provider: body.token.provider, idToken: body.token.idToken, nonce: body.token.nonce,
            logger: context.logger)
        let store = identities.store
        let (me, created) = try await accounts.pool.withTenantTransaction(identity.tenantID, logger: context.logger) { connection in
            try await store.spend(tenantID: identity.tenantID, token: token, on: connection)
            let owner = try await store.owner(tenantID: identity.tenantID, provider: provider.name, subject: token.subject, on: connection)
            switch owner?.userID {
            case identity.userID?: break
            case .some: throw IdentityError.identityTaken
            case nil: try await store.link(tenantID: identity.tenantID, userID: identity.userID, provider: provider.name, token: token, on: connection)
            }
            return (try await accounts.me(identity, on: connection), owner == nil)
        }
        await identities.keepAppleToken(
            code: body.authorizationCode, provider: provider, token: token, tenantID: identity.tenantID, logger: context.logger)
        return EditedResponse(status: created ? .created : .ok, response: me)
    }

    /// Removes a sign-in method, confirmed, unless it is the account's last; Apple's token is revoked.
    @Sendable func unlink(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        var request = request
        let identity = try context.requireIdentity()
        let provider = try context.parameters.require("provider")
        let body = try await request.decode(ConfirmationBody.self, context: context, limit: bodyLimit)
        guard IdentityProvider.nameProblem(provider) == nil else { throw IdentityError.notLinked }
        try await accounts.confirm(identity, with: body.confirmation, address: context.clientAddress, logger: context.logger)
        let store = identities.store
        let appleToken = try await accounts.pool.withTenantTransaction(identity.tenantID, logger: context.logger) { connection in
            // Locks the user's row: two unlinks at once cannot both pass the last-method check.
            let methods = try await store.signInMethods(tenantID: identity.tenantID, userID: identity.userID, on: connection)
            guard methods.providers.contains(provider) else { throw IdentityError.notLinked }
            guard methods.hasPassword || methods.providers.count > 1 else { throw IdentityError.lastSignInMethod }
            return try await store.unlink(tenantID: identity.tenantID, userID: identity.userID, provider: provider, on: connection)
        }
        if case .some(.some(let sealed)) = appleToken {
            await identities.revoke([sealed], tenantID: identity.tenantID, logger: context.logger)
        }
        return .noContent
    }

    /// The chosen username if free (else `409` with a free suggestion), or one derived from the token.
    private func newUsername(chosen: String?, token: VerifiedIDToken, tenantID: Int64, on connection: PostgresConnection) async throws -> String {
        let store = identities.store
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
