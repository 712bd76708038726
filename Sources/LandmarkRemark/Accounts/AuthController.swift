import Hummingbird
import Postgres

/// `POST /v1/auth/signup`, `/login`, `/refresh`, `/logout`.
struct AuthController {
    let accounts: AccountServices
    let bodyLimit: Int


    var endpoints: RouteCollection<AppRequestContext> {
        RouteCollection(context: AppRequestContext.self)
            .post("signup", use: signup)
            .post("login", use: logIn)
            .post("refresh", use: refresh)
    }

    /// Logout needs a token, so it sits behind the authenticator.
    var authenticatedEndpoints: RouteCollection<AppRequestContext> {
        RouteCollection(context: AppRequestContext.self)
            .post("logout", use: logout)
    }

    @Sendable func signup(_ request: Request, context: AppRequestContext) async throws -> EditedResponse<TokenResponse> {
        var request = request
        let tenant = try await tenant(of: request, context: context)
        let body = try await request.decode(SignupBody.self, rules: tenant, context: context, limit: bodyLimit)
        let hash = try await accounts.hashing.hash(body.password)
        let userAgent = request.headers[.userAgent]
        let response = try await accounts.pool.withTenantTransaction(tenant.id, logger: context.logger) { connection in
            let user = try await accounts.users.create(tenantID: tenant.id, username: body.username, email: body.email, passwordHash: hash, on: connection)
            let tokens = try await accounts.sessions.create(tenantID: tenant.id, userID: user.id, userAgent: userAgent, on: connection)
            return TokenResponse(user: user, tokens: tokens)
        }
        return EditedResponse(status: .created, response: response)
    }

    @Sendable func logIn(_ request: Request, context: AppRequestContext) async throws -> TokenResponse {
        var request = request
        let tenant = try await tenant(of: request, context: context)
        let body = try await request.decode(LoginBody.self, context: context, limit: bodyLimit)
        let user = try await accounts.login.verifiedUser(tenantID: tenant.id, login: body.login, password: body.password, address: context.clientAddress, logger: context.logger)
        let userAgent = request.headers[.userAgent]
        let tokens = try await accounts.pool.withTenantTransaction(tenant.id, logger: context.logger) { connection in
            try await accounts.sessions.create(tenantID: tenant.id, userID: user.id, userAgent: userAgent, on: connection)
        }
        return TokenResponse(user: user, tokens: tokens)
    }

    @Sendable func refresh(_ request: Request, context: AppRequestContext) async throws -> TokenResponse {
        var request = request
        let tenant = try await tenant(of: request, context: context)
        let body = try await request.decode(RefreshBody.self, context: context, limit: bodyLimit)
        guard body.isPlausible else { throw AccountError.refreshTokenInvalid }
        let outcome = try await accounts.pool.withTenantTransaction(tenant.id, logger: context.logger) { connection -> (SessionStore.RefreshOutcome, UserRecord?) in
            let outcome = try await accounts.sessions.refresh(tenantID: tenant.id, refreshToken: body.refreshToken, on: connection)
            guard case .issued(let userID, _) = outcome else { return (outcome, nil) }
            return (outcome, try await accounts.users.find(tenantID: tenant.id, id: userID, on: connection))
        }
        switch outcome {
        case (.issued(_, let tokens), let user?): return TokenResponse(user: user, tokens: tokens)
        case (.reused, _): throw AccountError.refreshTokenReused
        default: throw AccountError.refreshTokenInvalid
        }
    }

    @Sendable func logout(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        let identity = try context.requireIdentity()
        var parameters = try QueryParameters(query: request.uri.query)
        let all: Bool
        switch parameters.string("all") {
        case nil, "false": all = false
        case "true": all = true
        default: throw AppError.malformed("all must be true or false")
        }
        try parameters.finish()
        try await accounts.pool.withTenantTransaction(identity.tenantID, logger: context.logger) { connection in
            if all {
                try await accounts.sessions.revokeAll(
                    tenantID: identity.tenantID, userID: identity.userID, keeping: nil, reason: "logout_all", on: connection)
            } else {
                try await accounts.sessions.revoke(tenantID: identity.tenantID, sessionID: identity.sessionID, reason: "logout", on: connection)
            }
        }
        return .noContent
    }

    /// The tenant an unauthenticated call names with `X-Tenant`, noted for the request's log line.
    private func tenant(of request: Request, context: AppRequestContext) async throws -> Tenant {
        let tenant = try await accounts.tenants.active(named: request.headers[.xTenant], logger: context.logger)
        context.tenantTag.set(tenant.slug)
        return tenant
    }
}
