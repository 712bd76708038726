import Hummingbird

/// `POST /v1/auth/id-token` and `/v1/auth/guest` (tenant from `X-Tenant`), and
/// `POST /v1/me/identities`, `DELETE /v1/me/identities/{provider}` for a signed-in user.
/// The handlers translate HTTP; `SignInService` does the work.
struct IdentityController {
    let signIns: SignInService
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

    /// Signs in the account of the token's `(provider, sub)`, making it on first sign-in (`201`).
    @Sendable func signIn(_ request: Request, context: AppRequestContext) async throws -> EditedResponse<TokenResponse> {
        var request = request
        let tenant = try await tenant(of: request, context: context)
        let body = try await request.decode(IDTokenBody.self, rules: .signIn, context: context, limit: bodyLimit)
        let (response, created) = try await signIns.signIn(body, in: tenant, userAgent: request.headers[.userAgent], logger: context.logger)
        return EditedResponse(status: created ? .created : .ok, response: response)
    }

    /// A guest account (`201`).
    @Sendable func guest(_ request: Request, context: AppRequestContext) async throws -> EditedResponse<TokenResponse> {
        let tenant = try await tenant(of: request, context: context)
        let response = try await signIns.guest(
            in: tenant, address: context.clientAddress, userAgent: request.headers[.userAgent], logger: context.logger)
        return EditedResponse(status: .created, response: response)
    }

    /// Adds a sign-in method to the caller's account (`201`; `200` when it was linked already).
    @Sendable func link(_ request: Request, context: AppRequestContext) async throws -> EditedResponse<Me> {
        var request = request
        let identity = try context.requireIdentity()
        let body = try await request.decode(IDTokenBody.self, rules: .link, context: context, limit: bodyLimit)
        let (me, created) = try await signIns.link(body, to: identity, address: context.clientAddress, logger: context.logger)
        return EditedResponse(status: created ? .created : .ok, response: me)
    }

    /// Removes a sign-in method, unless it is the account's last.
    @Sendable func unlink(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        var request = request
        let identity = try context.requireIdentity()
        let provider = try context.parameters.require("provider")
        let body = try await request.decode(ConfirmationBody.self, context: context, limit: bodyLimit)
        try await signIns.unlink(provider, from: identity, confirmedBy: body.confirmation, address: context.clientAddress, logger: context.logger)
        return .noContent
    }

    /// The tenant an unauthenticated call names with `X-Tenant`, noted for the request's log line.
    private func tenant(of request: Request, context: AppRequestContext) async throws -> Tenant {
        let tenant = try await signIns.accounts.tenant(named: request.headers[.xTenant], logger: context.logger)
        context.tenantTag.set(tenant.slug)
        return tenant
    }
}
