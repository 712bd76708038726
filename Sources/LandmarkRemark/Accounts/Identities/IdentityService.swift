import Credentials
import Foundation
import Logging
import Postgres

/// Sign-in with ID tokens as the controllers use it: find the tenant's provider and verify a
/// token against it, confirm a signed-in user with a fresh one, and keep and revoke Apple's
/// refresh tokens. Outgoing calls (keys, Apple) never run inside a database transaction.
struct IdentityService: Sendable {
    let pool: PostgresPool
    let store: IdentityStore
    let verifier: IDTokenVerifier
    let apple: AppleAccountClient
    /// Seals Apple's refresh tokens; nil without `LR_DATA_KEY`.
    let secrets: SecretBox?
    /// An ID token confirming a sensitive change must be at most this old.
    static let reauthenticationAge: TimeInterval = 300

    /// The tenant's provider, and the token verified against it.
    func verify(
        tenantID: Int64, provider name: String, idToken: String, nonce: String?, logger: Logger
    ) async throws -> (IdentityProvider, VerifiedIDToken) {
        let provider = try await pool.withTenantTransaction(tenantID, logger: logger) { connection in
            try await store.provider(tenantID: tenantID, name: name, on: connection)
        }
        guard let provider else { throw IdentityError.providerNotEnabled(name) }
        return (provider, try await verifier.verify(idToken, nonce: nonce, provider: provider, logger: logger))
    }

    /// Confirms a signed-in user with an ID token instead of a password: one of the account's
    /// own identities, issued within the last five minutes, not used before.
    func reauthenticate(_ identity: Identity, provider name: String, idToken: String, nonce: String?, logger: Logger) async throws {
        let (provider, token) = try await verify(
            tenantID: identity.tenantID, provider: name, idToken: idToken, nonce: nonce, logger: logger)
        guard Date().timeIntervalSince(token.issuedAt) <= Self.reauthenticationAge else {
            throw IdentityError.tokenInvalid("the token was issued more than 5 minutes ago; sign in with \(provider.name) again")
        }
        try await pool.withTenantTransaction(identity.tenantID, logger: logger) { connection in
            let owner = try await store.owner(tenantID: identity.tenantID, provider: provider.name, subject: token.subject, on: connection)
            guard owner?.userID == identity.userID else {
                throw IdentityError.tokenInvalid("the token is not one of this account's identities")
            }
            try await store.spend(tenantID: identity.tenantID, token: token, on: connection)
        }
    }

    /// Exchanges an Apple authorization code for a refresh token and keeps it, sealed, with the
    /// identity (called once the sign-in or link has committed). Best effort: sign-in does not
    /// fail because Apple or the setup cannot do this (it is logged).
    func keepAppleToken(code: String?, provider: IdentityProvider, token: VerifiedIDToken, tenantID: Int64, logger: Logger) async {
        guard let code else { return }
        guard provider.name == "apple", let account = provider.apple, let secrets else {
            logger.notice(
                "authorization_code ignored: the tenant has no Apple key, or the service no LR_DATA_KEY",
                metadata: ["provider": "\(provider.name)"])
            return
        }
        do {
            let refreshToken = try await apple.exchange(code: code, clientID: token.clientID, account: account)
            let sealed = secrets.seal(Array(refreshToken.utf8), binding: Self.binding(tenantID: tenantID, subject: token.subject))
            try await pool.withTenantTransaction(tenantID, logger: logger) { connection in
                try await store.storeAppleToken(tenantID: tenantID, subject: token.subject, sealed: sealed, on: connection)
            }
        } catch {
            logger.warning("Apple authorization code exchange failed", metadata: ["error": "\(error)"])
        }
    }

    /// Revokes Apple refresh tokens kept for identities that are gone (unlinked, or the
    /// account deleted). Best effort, after the database change: logged when it fails.
    func revoke(_ tokens: [SealedAppleToken], tenantID: Int64, logger: Logger) async {
        guard !tokens.isEmpty else { return }
        guard let secrets else {
            logger.error("Apple tokens cannot be revoked: LR_DATA_KEY is not set", metadata: ["count": "\(tokens.count)"])
            return
        }
        let provider = try? await pool.withTenantTransaction(tenantID, logger: logger) { connection in
            try await store.provider(tenantID: tenantID, name: "apple", on: connection)
        }
        guard let account = provider?.apple else {
            logger.error("Apple tokens cannot be revoked: the tenant has no Apple key now", metadata: ["count": "\(tokens.count)"])
            return
        }
        for token in tokens {
            do {
                let plain = try secrets.open(token.sealed, binding: Self.binding(tenantID: tenantID, subject: token.subject))
                try await apple.revoke(refreshToken: String(decoding: plain, as: UTF8.self), clientID: token.clientID, account: account)
                logger.info("Apple refresh token revoked", metadata: ["client_id": "\(token.clientID)"])
            } catch {
                logger.error("Apple refresh token could not be revoked", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Binds a sealed token to its row: it cannot be opened as another user's.
    private static func binding(tenantID: Int64, subject: String) -> [UInt8] {
        Array("user_identities/\(tenantID)/apple/\(subject)".utf8)
    }
}
