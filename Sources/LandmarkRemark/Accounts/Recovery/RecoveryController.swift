import Hummingbird

/// `POST /v1/me/email/verification`, `/v1/me/email/verify`, `/v1/auth/password/forgot` and
/// `/v1/auth/password/reset`.
struct RecoveryController {
    let verification: EmailVerificationService
    let resets: PasswordResetService
    let accounts: AccountService
    /// `verify` with a code needs the caller's token; with a link's token, nothing.
    let authenticator: Authenticator
    let bodyLimit: Int

    /// Behind the authenticator, at `me/email`.
    var authenticatedEndpoints: RouteCollection<AppRequestContext> {
        RouteCollection(context: AppRequestContext.self)
            .post("verification", use: requestVerification)
    }

    /// Without a sign-in, at `me/email`.
    var linkEndpoints: RouteCollection<AppRequestContext> {
        RouteCollection(context: AppRequestContext.self)
            .post("verify", use: verify)
    }

    /// Without a sign-in, at `auth/password`.
    var passwordEndpoints: RouteCollection<AppRequestContext> {
        RouteCollection(context: AppRequestContext.self)
            .post("forgot", use: forgot)
            .post("reset", use: reset)
    }

    @Sendable func requestVerification(_ request: Request, context: AppRequestContext) async throws -> EditedResponse<EmailVerificationSent> {
        let identity = try context.requireIdentity()
        let sent = try await verification.request(identity, languages: Self.languages(request), address: context.clientAddress, logger: context.logger)
        return EditedResponse(status: .accepted, response: sent)
    }

    @Sendable func verify(_ request: Request, context: AppRequestContext) async throws -> EmailVerified {
        var request = request
        let body = try await request.decode(VerifyEmailBody.self, context: context, limit: bodyLimit)
        var identity: Identity?
        if case .code = body.proof { identity = try await authenticator.authenticate(request, context: context) }
        return try await verification.verify(body.proof, identity: identity, logger: context.logger)
    }

    @Sendable func forgot(_ request: Request, context: AppRequestContext) async throws -> EditedResponse<PasswordResetRequested> {
        var request = request
        let tenant = try await tenant(of: request, context: context)
        let body = try await request.decode(ForgotPasswordBody.self, context: context, limit: bodyLimit)
        try await resets.forgot(body, in: tenant, address: context.clientAddress, languages: Self.languages(request), logger: context.logger)
        return EditedResponse(status: .accepted, response: PasswordResetRequested())
    }

    @Sendable func reset(_ request: Request, context: AppRequestContext) async throws -> TokenResponse {
        var request = request
        let body = try await request.decode(ResetPasswordBody.self, context: context, limit: bodyLimit)
        // A link's token names its tenant; X-Tenant, when sent, must be that one.
        var tenant: Tenant?
        if request.headers[.xTenant] != nil || body.login != nil { tenant = try await self.tenant(of: request, context: context) }
        if case .link(let token) = body.proof, let tenant, AccountCodes.tenant(ofLink: token) != tenant.id { throw TenantError.mismatch }
        return try await resets.reset(
            body, tenant: tenant, userAgent: request.headers[.userAgent], languages: Self.languages(request), logger: context.logger)
    }

    private func tenant(of request: Request, context: AppRequestContext) async throws -> Tenant {
        let tenant = try await accounts.tenant(named: request.headers[.xTenant], logger: context.logger)
        context.tenantTag.set(tenant.slug)
        return tenant
    }

    static func languages(_ request: Request) -> [String] {
        MailTemplates.languages(acceptLanguage: request.headers[.acceptLanguage])
    }
}
