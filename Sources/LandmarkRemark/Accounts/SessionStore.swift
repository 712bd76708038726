import Credentials
import Foundation
import Logging
import Postgres

/// Tokens handed to a client. Only their SHA-256 hashes are stored.
struct IssuedTokens: Sendable {
    let accessToken: String
    let refreshToken: String
    let expiresIn: Int
}

/// Sessions and their tokens: creation, rotation with a grace window and
/// reuse detection, revocation.
struct SessionStore: Sendable {
    let accessTokenLifetime: Int
    let refreshTokenLifetime: Int
    let refreshGraceSeconds: Int
    /// Signs the access tokens issued, so that replicas verify them without the database.
    let signer: AccessTokenSigner

    /// What presenting a refresh token led to. Reuse is an outcome, not a throw,
    /// because the session's revocation must commit before the client hears `401`.
    enum RefreshOutcome: Sendable {
        case issued(userID: Int64, tokens: IssuedTokens)
        case invalid
        case reused
    }

    static let accessTokenPrefix = "lr_at_"
    static let refreshTokenPrefix = "lr_rt_"

    func create(tenantID: Int64, userID: Int64, userAgent: String?, on connection: PostgresConnection) async throws -> IssuedTokens {
        let rows = try await connection.query("""
            INSERT INTO sessions (tenant_id, user_id, user_agent, expires_at)
            VALUES (\(tenantID), \(userID), \(userAgent.map { String($0.prefix(512)) }),
                    now() + make_interval(secs => \(refreshTokenLifetime)))
            RETURNING id
            """)
        let sessionID = try rows[0].decode(Int64.self, column: 0)
        return try await issue(tenantID: tenantID, sessionID: sessionID, on: connection)
    }

    /// Rotates a refresh token: the presented one is retired and a new pair issued.
    /// A token naming another tenant is as unknown as any token of another tenant: the
    /// lookup is in `tenantID` alone.
    func refresh(tenantID: Int64, refreshToken: String, on connection: some PostgresQuerying) async throws -> RefreshOutcome {
        guard let part = Tokens.tenantPart(of: refreshToken, prefix: Self.refreshTokenPrefix),
            part == .legacy || part == .tenant(tenantID)
        else { return .invalid }
        let rows = try await connection.query("""
            SELECT tok.session_id, s.user_id, tok.retired_at IS NULL,
                   tok.retired_at > now() - make_interval(secs => \(refreshGraceSeconds))
            FROM session_tokens tok
            JOIN sessions s ON s.tenant_id = \(tenantID) AND s.id = tok.session_id
            JOIN users u ON u.tenant_id = \(tenantID) AND u.id = s.user_id
            WHERE tok.tenant_id = \(tenantID) AND tok.token_hash = \(Self.hash(refreshToken))
              AND tok.kind = 'refresh' AND tok.expires_at > now()
              AND s.revoked_at IS NULL AND s.expires_at > now() AND u.disabled_at IS NULL
            FOR UPDATE OF tok
            """)
        guard let row = rows.first else { return .invalid }
        let (sessionID, userID, current, withinGrace) = try row.decode((Int64, Int64, Bool, Bool?).self)
        if current {
            try await connection.query("""
                UPDATE session_tokens SET retired_at = now()
                WHERE tenant_id = \(tenantID) AND token_hash = \(Self.hash(refreshToken))
                """)
        } else if withinGrace != true {
            try await revoke(tenantID: tenantID, sessionID: sessionID, reason: "refresh_token_reused", on: connection)
            return .reused
        }
        try await connection.query("""
            UPDATE sessions SET last_used_at = now(), expires_at = now() + make_interval(secs => \(refreshTokenLifetime))
            WHERE tenant_id = \(tenantID) AND id = \(sessionID)
            """)
        return .issued(userID: userID, tokens: try await issue(tenantID: tenantID, sessionID: sessionID, on: connection))
    }

    func revoke(tenantID: Int64, sessionID: Int64, reason: String, on connection: some PostgresQuerying) async throws {
        try await connection.query("""
            UPDATE sessions SET revoked_at = now(), revoked_reason = \(reason)
            WHERE tenant_id = \(tenantID) AND id = \(sessionID) AND revoked_at IS NULL
            """)
    }

    /// Ends every session of a user, except `keeping` (the one changing its password).
    func revokeAll(tenantID: Int64, userID: Int64, keeping: Int64?, reason: String, on connection: PostgresConnection) async throws {
        try await connection.query("""
            UPDATE sessions SET revoked_at = now(), revoked_reason = \(reason)
            WHERE tenant_id = \(tenantID) AND user_id = \(userID) AND revoked_at IS NULL
              AND id IS DISTINCT FROM \(keeping)
            """)
    }

    private func issue(tenantID: Int64, sessionID: Int64, on connection: some PostgresQuerying) async throws -> IssuedTokens {
        let access = try await signedAccessToken(tenantID: tenantID, sessionID: sessionID, on: connection)
            ?? Tokens.tenantToken(prefix: Self.accessTokenPrefix, tenantID: tenantID)
        let refresh = Tokens.tenantToken(prefix: Self.refreshTokenPrefix, tenantID: tenantID)
        try await connection.query("""
            INSERT INTO session_tokens (tenant_id, token_hash, session_id, kind, expires_at) VALUES
                (\(tenantID), \(Self.hash(access)), \(sessionID), 'access', now() + make_interval(secs => \(accessTokenLifetime))),
                (\(tenantID), \(Self.hash(refresh)), \(sessionID), 'refresh', now() + make_interval(secs => \(refreshTokenLifetime)))
            """)
        return IssuedTokens(accessToken: access, refreshToken: refresh, expiresIn: accessTokenLifetime)
    }

    /// A signed access token for the session, carrying the tenant's revocation epoch read in
    /// the same snapshot as the checks that the session is live and its user enabled: a
    /// revocation committed before that snapshot fails the checks here, and one committed
    /// after has a higher epoch, so every replica looks the token up once it has read it.
    /// Nil (an opaque token, which the lookup judges) when the checks fail, as a concurrent
    /// revocation would make them, or the username is too long to carry. Its expiry is the
    /// database's `now()`, the transaction's, as the stored row's.
    private func signedAccessToken(tenantID: Int64, sessionID: Int64, on connection: some PostgresQuerying) async throws -> String? {
        let rows = try await connection.query("""
            SELECT u.id, u.username, coalesce((SELECT e.epoch FROM auth_epochs e WHERE e.tenant_id = \(tenantID)), 0),
                   floor(extract(epoch FROM now()))::bigint + \(accessTokenLifetime)
            FROM sessions s JOIN users u ON u.tenant_id = \(tenantID) AND u.id = s.user_id
            WHERE s.tenant_id = \(tenantID) AND s.id = \(sessionID) AND s.revoked_at IS NULL AND u.disabled_at IS NULL
            """)
        guard let row = rows.first else { return nil }
        let (userID, username, epoch, expires) = try row.decode((Int64, String, Int64, Int64).self)
        return signer.mint(
            .init(tenantID: tenantID, userID: userID, sessionID: sessionID, expires: expires, epoch: epoch, username: username))
    }

    static func hash(_ token: String) -> PostgresBytes {
        PostgresBytes(Tokens.sha256(token))
    }
}
