import Hummingbird
import Postgres

/// `GET/PATCH/DELETE /v1/me` and `GET /v1/users/{username}`.
struct UsersController {
    let accounts: AccountServices
    let bodyLimit: Int


    var meEndpoints: RouteCollection<AppRequestContext> {
        RouteCollection(context: AppRequestContext.self)
            .get(use: me)
            .patch(use: updateMe)
            .delete(use: deleteMe)
    }

    var userEndpoints: RouteCollection<AppRequestContext> {
        RouteCollection(context: AppRequestContext.self)
            .get(":username", use: profile)
    }

    @Sendable func me(_ request: Request, context: AppRequestContext) async throws -> Me {
        let identity = try context.requireIdentity()
        return try await accounts.pool.withTenantTransaction(identity.tenantID, logger: context.logger) { try await accounts.me(identity, on: $0) }
    }

    /// Changes email and/or password. A password change is confirmed (`confirm`) and ends
    /// every other session.
    @Sendable func updateMe(_ request: Request, context: AppRequestContext) async throws -> Me {
        var request = request
        let identity = try context.requireIdentity()
        guard let tenant = try await accounts.tenants.find(id: identity.tenantID, logger: context.logger) else { throw AccountError.sessionEnded }
        let rules = ProfileChange.Rules(username: identity.username, minimumPasswordLength: tenant.minPasswordLength)
        let change = try await request.decode(ProfileChange.self, rules: rules, context: context, limit: bodyLimit)
        var newHash: String?
        if let password = change.password {
            try await accounts.confirm(identity, with: password.confirmation, context: context)
            newHash = try await accounts.hashing.hash(password.new)
        }
        return try await accounts.pool.withTenantTransaction(identity.tenantID, logger: context.logger) { connection in
            if case .some(let email) = change.email {
                try await accounts.users.updateEmail(tenantID: identity.tenantID, id: identity.userID, email: email, on: connection)
            }
            if let newHash {
                try await accounts.users.updatePasswordHash(tenantID: identity.tenantID, id: identity.userID, hash: newHash, on: connection)
                try await accounts.sessions.revokeAll(
                    tenantID: identity.tenantID, userID: identity.userID, keeping: identity.sessionID,
                    reason: "password_changed", on: connection)
            }
            return try await accounts.me(identity, on: connection)
        }
    }

    /// Deletes the account once confirmed (`confirm`); sessions, notes and identities go with
    /// it, and Apple's refresh tokens are revoked at Apple (App Store rule 5.1.1(v)).
    @Sendable func deleteMe(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        var request = request
        let identity = try context.requireIdentity()
        let body = try await request.decode(ConfirmationBody.self, context: context, limit: bodyLimit)
        try await accounts.confirm(identity, with: body.confirmation, context: context)
        let appleTokens = try await accounts.pool.withTenantTransaction(identity.tenantID, logger: context.logger) { connection in
            let tokens = try await accounts.identities.store.appleTokens(tenantID: identity.tenantID, userID: identity.userID, on: connection)
            try await accounts.users.delete(tenantID: identity.tenantID, id: identity.userID, on: connection)
            return tokens
        }
        await accounts.identities.revoke(appleTokens, tenantID: identity.tenantID, logger: context.logger)
        return .noContent
    }

    /// Another user's public profile; `note_count` counts public notes only.
    @Sendable func profile(_ request: Request, context: AppRequestContext) async throws -> PublicProfile {
        let identity = try context.requireIdentity()
        let username = try context.parameters.require("username")
        guard Username.problem(username) == nil else { throw AccountError.userNotFound }
        let profile = try await accounts.pool.withTenantTransaction(identity.tenantID, logger: context.logger) { connection in
            try await accounts.users.publicProfile(tenantID: identity.tenantID, username: username, on: connection)
        }
        guard let profile else { throw AccountError.userNotFound }
        return profile
    }
}
