import Hummingbird

/// `GET/PATCH/DELETE /v1/me` and `GET /v1/users/{username}`.
struct UsersController {
    let accounts: AccountService
    let export: AccountExport
    let bodyLimit: Int

    var meEndpoints: RouteCollection<AppRequestContext> {
        RouteCollection(context: AppRequestContext.self)
            .get(use: me)
            .patch(use: updateMe)
            .delete(use: deleteMe)
            .post("terms", use: acceptTerms)
            .get("export", use: exportMe)
    }

    var userEndpoints: RouteCollection<AppRequestContext> {
        RouteCollection(context: AppRequestContext.self)
            .get(":username", use: profile)
    }

    @Sendable func me(_ request: Request, context: AppRequestContext) async throws -> Me {
        try await accounts.me(try context.requireIdentity(), logger: context.logger)
    }

    /// Changes email and/or password. A password change is confirmed and ends every other session.
    @Sendable func updateMe(_ request: Request, context: AppRequestContext) async throws -> Me {
        var request = request
        let identity = try context.requireIdentity()
        let rules = try await accounts.changeRules(for: identity, logger: context.logger)
        let change = try await request.decode(ProfileChange.self, rules: rules, context: context, limit: bodyLimit)
        return try await accounts.change(
            identity, to: change, address: context.clientAddress, languages: RecoveryController.languages(request), logger: context.logger)
    }

    /// Everything the service holds about the caller, streamed.
    @Sendable func exportMe(_ request: Request, context: AppRequestContext) async throws -> Response {
        try await export.response(for: try context.requireIdentity(), logger: context.logger)
    }

    /// Accepts the tenant's current terms of use.
    @Sendable func acceptTerms(_ request: Request, context: AppRequestContext) async throws -> Me {
        var request = request
        let identity = try context.requireIdentity()
        let body = try await request.decode(TermsAcceptance.self, context: context, limit: bodyLimit)
        return try await accounts.acceptTerms(body.version, for: identity, logger: context.logger)
    }

    /// Deletes the account once confirmed.
    @Sendable func deleteMe(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        var request = request
        let identity = try context.requireIdentity()
        let body = try await request.decode(ConfirmationBody.self, context: context, limit: bodyLimit)
        try await accounts.delete(identity, confirmedBy: body.confirmation, address: context.clientAddress, logger: context.logger)
        return .noContent
    }

    /// Another user's public profile; `note_count` counts public notes only.
    @Sendable func profile(_ request: Request, context: AppRequestContext) async throws -> PublicProfile {
        let identity = try context.requireIdentity()
        let username = try context.parameters.require("username")
        guard Username.problem(username) == nil else { throw AccountError.userNotFound }
        return try await accounts.profile(of: username, for: identity, logger: context.logger)
    }
}
