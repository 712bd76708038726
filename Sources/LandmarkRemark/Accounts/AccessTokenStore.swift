import Credentials
import Logging
import Postgres

/// Who holds an access token: the lookup every authenticated request, stream ticket and
/// open event stream makes. Stateless, like every store: its statements run on the
/// connection (or pool) it is given. `SessionStore` issues the tokens.
struct AccessTokenStore: Sendable, LiveTokenCheck {
    /// Who holds `token`, if it is a live access token: not expired, session not revoked,
    /// user and tenant not disabled. A token names its tenant (`lr_at_<tenant>_…`), so it is
    /// looked up in that tenant alone; one of the legacy form (issued before, and alive for
    /// at most a refresh token's lifetime) goes through the SECURITY DEFINER function that
    /// finds it by hash alone (migrations 0002, 0013).
    func identity(accessToken token: String, on pool: PostgresPool, logger: Logger) async throws -> Identity? {
        let hash = Tokens.sha256(token)
        switch Tokens.tenantPart(of: token, prefix: SessionStore.accessTokenPrefix) {
        case .tenant(let tenantID):
            let rows = try await pool.query(Self.lookupStatement(tenantID: tenantID, hash: hash), tenant: tenantID, logger: logger)
            return try Self.identity(rows, tenantID: tenantID, hash: hash)
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
    func identity(tenantID: Int64, accessTokenHash hash: [UInt8], on reads: some PostgresQuerying) async throws -> Identity? {
        try Self.identity(try await reads.query(Self.lookupStatement(tenantID: tenantID, hash: hash)), tenantID: tenantID, hash: hash)
    }

    /// For the event streams (`LiveTokenCheck`): whether the token still admits its holder.
    func isLive(tenantID: Int64, accessTokenHash hash: [UInt8], on reads: some PostgresQuerying) async throws -> Bool {
        try await identity(tenantID: tenantID, accessTokenHash: hash, on: reads) != nil
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
}
