import Hummingbird

/// `POST /v1/auth/signup`, `/login`, `/refresh`, `/logout`.
struct AuthController {
    let accounts: AccountService
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
        let response = try await accounts.signup(
            body, in: tenant, userAgent: request.headers[.userAgent], languages: RecoveryController.languages(request), logger: context.logger)
        return EditedResponse(status: .created, response: response)
    }

    @Sendable func logIn(_ request: Request, context: AppRequestContext) async throws -> TokenResponse {
        var request = request
        let tenant = try await tenant(of: request, context: context)
        let body = try await request.decode(LoginBody.self, context: context, limit: bodyLimit)
        return try await accounts.logIn(
            body, in: tenant, address: context.clientAddress, userAgent: request.headers[.userAgent], logger: context.logger)
    }

    @Sendable func refresh(_ request: Request, context: AppRequestContext) async throws -> TokenResponse {
        var request = request
        let tenant = try await tenant(of: request, context: context)
        let body = try await request.decode(RefreshBody.self, context: context, limit: bodyLimit)
        return try await accounts.refresh(body, in: tenant, logger: context.logger)
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
        // The app's own push device, removed with the session (issue 39).
        let device = try parameters.string("device").map { text in
            guard let token = DeviceRegistration.token(text) else { throw AppError.malformed("device must be an APNs device token: 64 to 200 hex digits") }
            return token
        }
        try parameters.finish()
        try await accounts.logOut(identity, everywhere: all, device: device, logger: context.logger)
        return .noContent
    }

    /// The tenant an unauthenticated call names with `X-Tenant`, noted for the request's log line.
    private func tenant(of request: Request, context: AppRequestContext) async throws -> Tenant {
        let tenant = try await accounts.tenant(named: request.headers[.xTenant], logger: context.logger)
        context.tenantTag.set(tenant.slug)
        return tenant
    }
}
