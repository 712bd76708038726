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

    /// What presenting a refresh token led to. Reuse is an outcome, not a throw,
    /// because the session's revocation must commit before the client hears `401`.
    enum RefreshOutcome: Sendable {
        case issued(userID: Int64, tokens: IssuedTokens)
        case invalid
        case reused
    }

    static let accessTokenPrefix = "lr_at_"
    static let refreshTokenPrefix = "lr_rt_"

    /// Who holds `token`, if it is a live access token: not expired, session not revoked,
    /// user and tenant not disabled. A token names its tenant (`lr_at_<tenant>_…`), so it is
    /// looked up in that tenant alone; one of the legacy form (issued before, and alive for
    /// at most a refresh token's lifetime) goes through the SECURITY DEFINER function that
    /// finds it by hash alone (migrations 0002, 0013).
    static func identity(accessToken token: String, on pool: PostgresPool, logger: Logger) async throws -> Identity? {
        let hash = Tokens.sha256(token)
        switch Tokens.tenantPart(of: token, prefix: accessTokenPrefix) {
        case .tenant(let tenantID):
            let rows = try await pool.query(lookupStatement(tenantID: tenantID, hash: hash), tenant: tenantID, logger: logger)
            return try identity(rows, tenantID: tenantID, hash: hash)
        case .legacy:
            let rows = try await pool.query(
                "SELECT tenant_id, tenant_slug, user_id, username, session_id FROM authenticate_access_token(\(PostgresBytes(hash)))",
                logger: logger)
            guard let row = rows.first else { return nil }
            let (tenantID, slug, userID, username, sessionID) = try row.decode((Int64, String, Int64, String, Int64).self)
            return Identity(
                tenantID: tenantID, tenantSlug: slug, userID: userID, username: username, sessionID: sessionID, accessTokenHash: hash)
        case nil:
            return nil
        }
    }

    /// The live access token with this SHA-256 in `tenantID`, whatever its form: for a
    /// caller that knows the tenant already (a stream ticket, a stream checking its token).
    static func identity(tenantID: Int64, accessTokenHash hash: [UInt8], on reads: some PostgresQuerying) async throws -> Identity? {
        try identity(try await reads.query(lookupStatement(tenantID: tenantID, hash: hash)), tenantID: tenantID, hash: hash)
    }

    /// The access-token lookup in one tenant, with exactly the rules of
    /// `authenticate_access_token` (migration 0013), run as the service's role with
    /// `tenantID` set: row-level security admits the claimed tenant's rows only, and every
    /// table names it, so on Citus the statement goes to that tenant's node. The primary
    /// key `(tenant_id, token_hash)` finds the token.
    static func lookupStatement(tenantID: Int64, hash: [UInt8]) -> PostgresQuery {
        """
        SELECT t.slug, u.id, u.username, s.id
        FROM session_tokens tok
        JOIN sessions s ON s.tenant_id = \(tenantID) AND s.id = tok.session_id
        JOIN users u ON u.tenant_id = \(tenantID) AND u.id = s.user_id
        JOIN tenants t ON t.id = \(tenantID)
        WHERE tok.tenant_id = \(tenantID) AND tok.token_hash = \(PostgresBytes(hash))
          AND tok.kind = 'access'
          AND tok.expires_at > now()
          AND s.revoked_at IS NULL
          AND u.disabled_at IS NULL
          AND t.disabled_at IS NULL
        """
    }

    private static func identity(_ rows: PostgresRows, tenantID: Int64, hash: [UInt8]) throws -> Identity? {
        guard let row = rows.first else { return nil }
        let (slug, userID, username, sessionID) = try row.decode((String, Int64, String, Int64).self)
        return Identity(
            tenantID: tenantID, tenantSlug: slug, userID: userID, username: username, sessionID: sessionID, accessTokenHash: hash)
    }

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
        let access = Tokens.tenantToken(prefix: Self.accessTokenPrefix, tenantID: tenantID)
        let refresh = Tokens.tenantToken(prefix: Self.refreshTokenPrefix, tenantID: tenantID)
        try await connection.query("""
            INSERT INTO session_tokens (tenant_id, token_hash, session_id, kind, expires_at) VALUES
                (\(tenantID), \(Self.hash(access)), \(sessionID), 'access', now() + make_interval(secs => \(accessTokenLifetime))),
                (\(tenantID), \(Self.hash(refresh)), \(sessionID), 'refresh', now() + make_interval(secs => \(refreshTokenLifetime)))
            """)
        return IssuedTokens(accessToken: access, refreshToken: refresh, expiresIn: accessTokenLifetime)
    }

    static func hash(_ token: String) -> PostgresBytes {
        PostgresBytes(Tokens.sha256(token))
    }
}
