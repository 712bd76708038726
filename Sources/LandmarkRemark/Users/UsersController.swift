import Foundation
import Hummingbird
import Postgres

/// `GET/PATCH/DELETE /v1/me` and `GET /v1/users/{username}`.
struct UsersController {
    let services: AppServices
    let auth: AuthController

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

    struct Me: Encodable {
        let id: String
        let username: String
        let email: String?
        let createdAt: Date
        let noteCount: Int
        let placeCount: Int

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(username, forKey: .username)
            try container.encode(email, forKey: .email)
            try container.encode(createdAt, forKey: .createdAt)
            try container.encode(noteCount, forKey: .noteCount)
            try container.encode(placeCount, forKey: .placeCount)
        }

        enum CodingKeys: String, CodingKey { case id, username, email, createdAt, noteCount, placeCount }
    }

    struct PublicProfile: Encodable {
        let id: String
        let username: String
        let createdAt: Date
        let noteCount: Int
    }

    @Sendable func me(_ request: Request, context: AppRequestContext) async throws -> Response {
        let identity = try context.requireIdentity()
        let me = try await services.pool.withTenant(identity.tenantID) { try await loadMe(identity, on: $0) }
        return try .json(me)
    }

    func loadMe(_ identity: Identity, on connection: PostgresConnection) async throws -> Me {
        let rows = try await connection.query("""
            SELECT u.id, u.username, u.email, u.created_at,
                   (SELECT count(*) FROM notes n WHERE n.tenant_id = u.tenant_id AND n.user_id = u.id),
                   (SELECT count(*) FROM places p WHERE p.tenant_id = u.tenant_id AND p.created_by = u.id)
            FROM users u
            WHERE u.tenant_id = \(identity.tenantID) AND u.id = \(identity.userID)
            """)
        guard let row = rows.first else { throw AppError.unauthenticated }
        let (id, username, email, created, notes, places) = try row.decode((Int64, String, String?, Date, Int, Int).self)
        return Me(id: String(id), username: username, email: email, createdAt: created, noteCount: notes, placeCount: places)
    }

    /// Changes email and/or password. A password change needs the current one
    /// (a wrong one is `401` and counts as a failed login) and ends every other session.
    @Sendable func updateMe(_ request: Request, context: AppRequestContext) async throws -> Response {
        var request = request
        let identity = try context.requireIdentity()
        var body = try await request.jsonObject(context: context, limit: services.configuration.bodyLimitBytes)
        let changesEmail = body.contains("email")
        let email = body.string("email", required: false, nullable: true)
        if let email, let problem = AccountRules.emailProblem(email) { body.fail("email", problem) }
        var current: String?
        var new: String?
        if var password = body.object("password", required: false) {
            current = password.string("current")
            new = password.string("new")
            body.absorb(password)
        }
        let tenant = try await services.tenants.find(id: identity.tenantID)
        if let new, let tenant {
            for problem in PasswordPolicy.problems(new, username: identity.username, minimumLength: tenant.minPasswordLength, field: "password.new") {
                body.fail(problem.field, problem.message)
            }
        }
        try body.finish()
        guard let tenant else { throw AppError.unauthenticated }

        var newHash: String?
        if let current, let new {
            _ = try await auth.verifiedUser(tenant: tenant, login: identity.username, password: current, address: context.clientAddress)
            newHash = try await services.hashPassword(new)
        }
        let me = try await services.pool.withTenant(identity.tenantID) { connection in
            if changesEmail {
                try await services.users.updateEmail(tenantID: identity.tenantID, id: identity.userID, email: email, on: connection)
            }
            if let newHash {
                try await services.users.updatePasswordHash(tenantID: identity.tenantID, id: identity.userID, hash: newHash, on: connection)
                try await services.sessions.revokeAll(
                    tenantID: identity.tenantID, userID: identity.userID, keeping: identity.sessionID,
                    reason: "password_changed", on: connection)
            }
            return try await loadMe(identity, on: connection)
        }
        return try .json(me)
    }

    /// Deletes the account after checking its password; sessions and notes go with it.
    @Sendable func deleteMe(_ request: Request, context: AppRequestContext) async throws -> Response {
        var request = request
        let identity = try context.requireIdentity()
        var body = try await request.jsonObject(context: context, limit: services.configuration.bodyLimitBytes)
        let password = body.string("password")
        try body.finish()
        guard let password, let tenant = try await services.tenants.find(id: identity.tenantID) else {
            throw AppError.unauthenticated
        }
        _ = try await auth.verifiedUser(tenant: tenant, login: identity.username, password: password, address: context.clientAddress)
        try await services.pool.withTenant(identity.tenantID) { connection in
            try await services.users.delete(tenantID: identity.tenantID, id: identity.userID, on: connection)
        }
        return .noContent()
    }

    /// Another user's public profile; `note_count` counts public notes only.
    @Sendable func profile(_ request: Request, context: AppRequestContext) async throws -> Response {
        let identity = try context.requireIdentity()
        let username = try context.parameters.require("username")
        guard AccountRules.usernameProblem(username) == nil else { throw AppError.notFound("user") }
        let profile = try await services.pool.withTenant(identity.tenantID) { connection -> PublicProfile? in
            let rows = try await connection.query("""
                SELECT u.id, u.username, u.created_at,
                       (SELECT count(*) FROM notes n
                        WHERE n.tenant_id = u.tenant_id AND n.user_id = u.id AND n.visibility = 'public')
                FROM users u
                WHERE u.tenant_id = \(identity.tenantID) AND lower(u.username) = lower(\(username)) AND u.disabled_at IS NULL
                """)
            guard let row = rows.first else { return nil }
            let (id, name, created, notes) = try row.decode((Int64, String, Date, Int).self)
            return PublicProfile(id: String(id), username: name, createdAt: created, noteCount: notes)
        }
        guard let profile else { throw AppError.notFound("user") }
        return try .json(profile)
    }
}
