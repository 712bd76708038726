import Credentials
import Hummingbird
import Postgres

/// `POST /v1/auth/signup`, `/login`, `/refresh`, `/logout`.
struct AuthController {
    let services: AppServices

    var endpoints: RouteCollection<AppRequestContext> {
        RouteCollection(context: AppRequestContext.self)
            .post("signup", use: signup)
            .post("login", use: login)
            .post("refresh", use: refresh)
    }

    /// Logout needs a token, so it sits behind the authenticator.
    var authenticatedEndpoints: RouteCollection<AppRequestContext> {
        RouteCollection(context: AppRequestContext.self)
            .post("logout", use: logout)
    }

    @Sendable func signup(_ request: Request, context: AppRequestContext) async throws -> Response {
        var request = request
        let tenant = try await services.tenants.require(request, context: context)
        var body = try await request.jsonObject(context: context, limit: services.configuration.bodyLimitBytes)
        let username = body.string("username")
        let password = body.string("password")
        let email = body.string("email", required: false, nullable: true)
        if let username, let problem = AccountRules.usernameProblem(username) { body.fail("username", problem) }
        if let email, let problem = AccountRules.emailProblem(email) { body.fail("email", problem) }
        if let password {
            for problem in PasswordPolicy.problems(password, username: username ?? "", minimumLength: tenant.minPasswordLength, field: "password") {
                body.fail(problem.field, problem.message)
            }
        }
        try body.finish()
        guard let username, let password else { throw AppError.internalError }

        let hash = try await services.hashPassword(password)
        let userAgent = request.headers[.userAgent]
        let (user, tokens) = try await services.pool.withTenant(tenant.id) { connection in
            let user = try await services.users.create(
                tenantID: tenant.id, username: username, email: email, passwordHash: hash, on: connection)
            let tokens = try await services.sessions.create(tenantID: tenant.id, userID: user.id, userAgent: userAgent, on: connection)
            return (user, tokens)
        }
        return try .json(TokenResponse(user: user, tokens: tokens), status: .created)
    }

    @Sendable func login(_ request: Request, context: AppRequestContext) async throws -> Response {
        var request = request
        let tenant = try await services.tenants.require(request, context: context)
        var body = try await request.jsonObject(context: context, limit: services.configuration.bodyLimitBytes)
        let login = body.string("username")
        let password = body.string("password")
        if let login, login.isEmpty || login.unicodeScalars.count > 254 { body.fail("username", "must be 1 to 254 characters") }
        if let password, password.unicodeScalars.count > PasswordPolicy.maximumLength {
            body.fail("password", "must be at most \(PasswordPolicy.maximumLength) characters")
        }
        try body.finish()
        guard let login, let password else { throw AppError.internalError }

        let user = try await verifiedUser(tenant: tenant, login: login, password: password, address: context.clientAddress)
        let userAgent = request.headers[.userAgent]
        let tokens = try await services.pool.withTenant(tenant.id) { connection in
            try await services.sessions.create(tenantID: tenant.id, userID: user.id, userAgent: userAgent, on: connection)
        }
        return try .json(TokenResponse(user: user, tokens: tokens))
    }

    /// Checks a password under the throttle (see `LoginThrottle`): `429` while blocked, `401`
    /// when wrong (already counted), the user when right (the count given back, the hash
    /// upgraded if its cost is old). Login, `PATCH /v1/me` and `DELETE /v1/me` all come here.
    func verifiedUser(tenant: Tenant, login: String, password: String, address: String) async throws -> UserRecord {
        let attempt = try await services.pool.withTenant(tenant.id) { connection in
            try await services.throttle.reserve(tenantID: tenant.id, login: login, address: address, on: connection)
        }
        // Hashing happens outside any transaction: it takes far longer than a query.
        let matches: Bool
        do {
            matches = try await services.verifyPassword(password, against: attempt.user?.passwordHash ?? services.dummyPasswordHash)
        } catch {
            // No verdict (hashing saturated, cancelled): nothing was guessed, so nothing counts.
            try? await services.pool.withTenant(tenant.id) { connection in
                try await services.throttle.refund(attempt, tenantID: tenant.id, on: connection)
            }
            throw error
        }
        guard let user = attempt.user, matches else { throw AppError.invalidCredentials }
        let upgraded = PasswordHasher.needsRehash(user.passwordHash, target: services.configuration.scrypt)
            ? try await services.hashPassword(password) : nil
        try await services.pool.withTenant(tenant.id) { connection in
            try await services.throttle.succeeded(attempt, userID: user.id, tenantID: tenant.id, on: connection)
            if let upgraded {
                try await services.users.updatePasswordHash(tenantID: tenant.id, id: user.id, hash: upgraded, on: connection)
            }
        }
        return user
    }

    @Sendable func refresh(_ request: Request, context: AppRequestContext) async throws -> Response {
        var request = request
        let tenant = try await services.tenants.require(request, context: context)
        var body = try await request.jsonObject(context: context, limit: services.configuration.bodyLimitBytes)
        let token = body.string("refresh_token")
        try body.finish()
        guard let token, token.hasPrefix("lr_rt_"), token.utf8.count <= 128 else { throw AppError.refreshTokenInvalid }

        let outcome = try await services.pool.withTenant(tenant.id) { connection -> (SessionStore.RefreshOutcome, UserRecord?) in
            let outcome = try await services.sessions.refresh(tenantID: tenant.id, refreshToken: token, on: connection)
            guard case .issued(let userID, _) = outcome else { return (outcome, nil) }
            return (outcome, try await services.users.find(tenantID: tenant.id, id: userID, on: connection))
        }
        switch outcome {
        case (.issued(_, let tokens), let user?): return try .json(TokenResponse(user: user, tokens: tokens))
        case (.reused, _): throw AppError.refreshTokenReused
        default: throw AppError.refreshTokenInvalid
        }
    }

    @Sendable func logout(_ request: Request, context: AppRequestContext) async throws -> Response {
        let identity = try context.requireIdentity()
        var parameters = try QueryParameters(query: request.uri.query)
        let all: Bool
        switch parameters.string("all") {
        case nil, "false": all = false
        case "true": all = true
        default: throw AppError.malformed("all must be true or false")
        }
        try parameters.finish()
        try await services.pool.withTenant(identity.tenantID) { connection in
            if all {
                try await services.sessions.revokeAll(
                    tenantID: identity.tenantID, userID: identity.userID, keeping: nil, reason: "logout_all", on: connection)
            } else {
                try await services.sessions.revoke(
                    tenantID: identity.tenantID, sessionID: identity.sessionID, reason: "logout", on: connection)
            }
        }
        return .noContent()
    }
}
