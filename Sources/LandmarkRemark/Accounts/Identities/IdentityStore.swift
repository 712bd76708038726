import Foundation
import Postgres

/// An identity linked to an account, as `GET /v1/me` shows it.
/// Apple's refresh token kept for an identity, sealed, with the client id it was issued to.
struct SealedAppleToken: Sendable {
    let subject: String
    let clientID: String
    let sealed: [UInt8]
}

/// The SQL of sign-in with ID tokens and guests: the tenant's providers, users' identities,
/// spent tokens and guest counts. Every call runs in a tenant transaction.
struct IdentityStore: Sendable {
    let settings: IdentitySettings

    /// The provider as this tenant accepts it, or nil when it does not.
    func provider(tenantID: Int64, name: String, on connection: PostgresConnection) async throws -> IdentityProvider? {
        let rows = try await connection.query("""
            SELECT client_ids, issuer, jwks_uri, nonce, apple_team_id, apple_key_id, apple_private_key
            FROM identity_providers WHERE tenant_id = \(tenantID) AND provider = \(name)
            """)
        guard let row = rows.first else { return nil }
        let (clientIDs, issuer, keysURL, nonce, teamID, keyID, privateKey) =
            try row.decode(([String], String?, String?, String, String?, String?, String?).self)
        let format = IdentityProvider.NonceFormat(rawValue: nonce) ?? .hashed
        switch name {
        case "apple":
            let builtIn = settings.apple
            var account: IdentityProvider.AppleAccount?
            if let teamID, let keyID, let privateKey, let tokenURL = builtIn.tokenURL, let revokeURL = builtIn.revokeURL {
                account = .init(teamID: teamID, keyID: keyID, privateKeyPEM: privateKey, tokenURL: tokenURL, revokeURL: revokeURL)
            }
            return IdentityProvider(
                name: name, clientIDs: clientIDs, issuers: builtIn.issuers, keysURL: builtIn.keysURL, nonce: format, apple: account)
        case "google":
            return IdentityProvider(
                name: name, clientIDs: clientIDs, issuers: settings.google.issuers, keysURL: settings.google.keysURL,
                nonce: format, apple: nil)
        default:
            guard let issuer, let keysURL else { return nil }
            return IdentityProvider(name: name, clientIDs: clientIDs, issuers: [issuer], keysURL: keysURL, nonce: format, apple: nil)
        }
    }

    /// Records the token as used; `tokenInvalid` when it was used before (a replay). Kept five minutes
    /// past `exp`: the verifier allows a minute of skew by the service's clock, the purge
    /// goes by the database's.
    func spend(tenantID: Int64, token: VerifiedIDToken, on connection: PostgresConnection) async throws {
        let rows = try await connection.query("""
            INSERT INTO id_token_uses (tenant_id, token_hash, expires_at)
            VALUES (\(tenantID), \(PostgresBytes(token.tokenHash)), \(token.expiresAt.addingTimeInterval(300)))
            ON CONFLICT DO NOTHING
            RETURNING 1
            """)
        guard !rows.isEmpty else { throw IdentityError.tokenInvalid("the token was already used") }
    }

    /// The account an identity belongs to, and whether that account is disabled.
    func owner(tenantID: Int64, provider: String, subject: String, on connection: PostgresConnection) async throws -> (userID: Int64, disabled: Bool)? {
        let rows = try await connection.query("""
            SELECT i.user_id, u.disabled_at IS NOT NULL
            FROM user_identities i JOIN users u ON u.tenant_id = \(tenantID) AND u.id = i.user_id
            WHERE i.tenant_id = \(tenantID) AND i.provider = \(provider) AND i.subject = \(subject)
            """)
        return try rows.first.map { try $0.decode((Int64, Bool).self) }
    }

    /// Links an identity; a guest linking one becomes a full account.
    func link(
        tenantID: Int64, userID: Int64, provider: String, token: VerifiedIDToken, on connection: PostgresConnection
    ) async throws {
        do {
            try await connection.query("""
                INSERT INTO user_identities (tenant_id, provider, subject, user_id, client_id, email)
                VALUES (\(tenantID), \(provider), \(token.subject), \(userID), \(token.clientID), \(token.email))
                """)
        } catch let error as PostgresError {
            if error.isUniqueViolation(constraint: "user_identities_pkey") { throw IdentityError.identityTaken }
            if error.isUniqueViolation(constraint: "user_identities_one_per_provider") { throw IdentityError.providerAlreadyLinked }
            throw error
        }
        try await connection.query("UPDATE users SET guest = false WHERE tenant_id = \(tenantID) AND id = \(userID) AND guest")
    }

    /// Notes a sign-in: when, and the email the provider gives now.
    func touch(tenantID: Int64, provider: String, token: VerifiedIDToken, on connection: PostgresConnection) async throws {
        try await connection.query("""
            UPDATE user_identities SET last_used_at = now(), email = coalesce(\(token.email), email)
            WHERE tenant_id = \(tenantID) AND provider = \(provider) AND subject = \(token.subject)
            """)
    }

    func storeAppleToken(
        tenantID: Int64, subject: String, sealed: [UInt8], on connection: PostgresConnection
    ) async throws {
        try await connection.query("""
            UPDATE user_identities SET apple_refresh_token = \(PostgresBytes(sealed))
            WHERE tenant_id = \(tenantID) AND provider = 'apple' AND subject = \(subject)
            """)
    }

    func identities(tenantID: Int64, userID: Int64, on connection: PostgresConnection) async throws -> [LinkedIdentity] {
        let rows = try await connection.query("""
            SELECT provider, email, created_at FROM user_identities
            WHERE tenant_id = \(tenantID) AND user_id = \(userID) ORDER BY provider
            """)
        return try rows.map { row in
            let (provider, email, created) = try row.decode((String, String?, Date).self)
            return LinkedIdentity(provider: provider, email: email, linkedAt: created)
        }
    }

    /// The ways the account can sign in again: whether it has a password, and its identities'
    /// providers. Locks the user's row first, and reads the identities in a statement of their
    /// own after it: a statement's snapshot is taken before it waits for a lock, so reading
    /// both at once would let two unlinks at once each see the other's identity still there.
    func signInMethods(tenantID: Int64, userID: Int64, on connection: PostgresConnection) async throws -> (hasPassword: Bool, providers: [String]) {
        let rows = try await connection.query("""
            SELECT password_hash IS NOT NULL FROM users WHERE tenant_id = \(tenantID) AND id = \(userID) FOR UPDATE
            """)
        guard let row = rows.first else { throw AccountError.sessionEnded }
        let providers = try await connection.query("""
            SELECT provider FROM user_identities WHERE tenant_id = \(tenantID) AND user_id = \(userID) ORDER BY provider
            """)
        return (try row.decode(Bool.self, column: 0), try providers.map { try $0.decode(String.self, column: 0) })
    }

    /// Removes the identity; returns its Apple token, if one was kept, for revoking.
    func unlink(tenantID: Int64, userID: Int64, provider: String, on connection: PostgresConnection) async throws -> SealedAppleToken?? {
        let rows = try await connection.query("""
            DELETE FROM user_identities WHERE tenant_id = \(tenantID) AND user_id = \(userID) AND provider = \(provider)
            RETURNING subject, client_id, apple_refresh_token
            """)
        guard let row = rows.first else { return .none }
        let (subject, clientID, sealed) = try row.decode((String, String, PostgresBytes?).self)
        return .some(sealed.map { SealedAppleToken(subject: subject, clientID: clientID, sealed: $0.bytes) })
    }

    /// The Apple tokens of an account about to be deleted.
    func appleTokens(tenantID: Int64, userID: Int64, on connection: PostgresConnection) async throws -> [SealedAppleToken] {
        let rows = try await connection.query("""
            SELECT subject, client_id, apple_refresh_token FROM user_identities
            WHERE tenant_id = \(tenantID) AND user_id = \(userID) AND provider = 'apple' AND apple_refresh_token IS NOT NULL
            """)
        return try rows.map { row in
            let (subject, clientID, sealed) = try row.decode((String, String, PostgresBytes).self)
            return SealedAppleToken(subject: subject, clientID: clientID, sealed: sealed.bytes)
        }
    }

    /// Counts a guest sign-up from `address` in the current hour; returns the count so far
    /// and the seconds until the hour ends.
    func countGuest(tenantID: Int64, address: String, on connection: PostgresConnection) async throws -> (count: Int, secondsLeft: Int) {
        let rows = try await connection.query("""
            WITH counted AS (
                INSERT INTO guest_signups AS g (tenant_id, address, window_start, count)
                VALUES (\(tenantID), \(address), date_trunc('hour', now()), 1)
                ON CONFLICT (tenant_id, address, window_start) DO UPDATE SET count = g.count + 1
                RETURNING count, window_start
            )
            -- The seconds left outside RETURNING: Citus takes only immutable expressions there.
            SELECT count, ceil(extract(epoch FROM window_start + interval '1 hour' - now()))::integer FROM counted
            """)
        return try rows[0].decode((Int, Int).self)
    }

    /// The first of `candidates` no user of the tenant has (ignoring case), if any.
    func firstFreeUsername(tenantID: Int64, candidates: [String], on connection: PostgresConnection) async throws -> String? {
        for candidate in candidates {
            let rows = try await connection.query("""
                SELECT 1 FROM users WHERE tenant_id = \(tenantID) AND lower(username) = lower(\(candidate))
                """)
            if rows.isEmpty { return candidate }
        }
        return nil
    }

    func guestsEnabled(tenantID: Int64, on connection: PostgresConnection) async throws -> Bool {
        try await connection.query("SELECT guests_enabled FROM tenants WHERE id = \(tenantID)")[0].decode(Bool.self)
    }
}
