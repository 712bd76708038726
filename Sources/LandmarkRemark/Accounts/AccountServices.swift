import Hummingbird
import Postgres

/// What the account controllers work with: the tenant's users, their sessions, the
/// password checks (`LoginService`) and hashing they share, and sign-in with ID tokens.
struct AccountServices: Sendable {
    let pool: PostgresPool
    let tenants: TenantStore
    let users: UserStore
    let sessions: SessionStore
    let login: LoginService
    let hashing: PasswordHashing
    let identities: IdentityService
}

extension AccountServices {
    /// `GET /v1/me`'s document: the account with its counts and sign-in methods.
    func me(_ identity: Identity, on connection: PostgresConnection) async throws -> Me {
        guard var me = try await users.me(tenantID: identity.tenantID, id: identity.userID, on: connection) else {
            throw AccountError.sessionEnded
        }
        me.identities = try await identities.store.identities(tenantID: identity.tenantID, userID: identity.userID, on: connection)
        return me
    }

    /// Confirms a sensitive change (a password change, linking or unlinking a sign-in method,
    /// deleting the account): by the password (a wrong one is `401` and counts as a failed
    /// login), or by a fresh ID token of one of the account's own identities. An account with
    /// neither (a guest) has nothing to confirm with, and its access token is enough; any
    /// other account without a confirmation is `422`.
    func confirm(_ identity: Identity, with confirmation: Confirmation, context: AppRequestContext) async throws {
        if let password = confirmation.password {
            _ = try await login.verifiedUser(
                tenantID: identity.tenantID, login: identity.username, password: password, address: context.clientAddress,
                logger: context.logger)
        } else if let token = confirmation.idToken {
            try await identities.reauthenticate(
                identity, provider: token.provider, idToken: token.idToken, nonce: token.nonce, logger: context.logger)
        } else {
            let methods = try await pool.withTenantTransaction(identity.tenantID, logger: context.logger) { connection in
                try await identities.store.signInMethods(tenantID: identity.tenantID, userID: identity.userID, on: connection)
            }
            guard !methods.hasPassword && methods.providers.isEmpty else { throw IdentityError.reauthenticationRequired }
        }
    }
}
