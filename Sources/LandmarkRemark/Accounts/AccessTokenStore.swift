import Credentials
import Logging
import Postgres

/// Who holds an access token: the lookup every authenticated request, stream ticket and
/// open event stream makes. Stateless, like every store: its statements run on the
/// connection (or pool) it is given. `SessionStore` issues the tokens.
struct AccessTokenStore: Sendable, LiveTokenCheck {
    /// Who holds `token`, if it is a live access token: not expired, session not revoked,
    /// user and tenant not disabled. A token, signed or opaque, names its tenant
    /// (`lr_at_<tenant>_…`), so it is
    /// looked up in that tenant alone, with what `AccessTokenCache` needs to keep it; one of
    /// the legacy form (issued before, and alive for at most a refresh token's lifetime) goes
    /// through the SECURITY DEFINER function that finds it by hash alone (migrations 0002,
    /// 0013), and is not kept.
    func lookUp(accessToken token: String, hash: [UInt8], on pool: PostgresPool, logger: Logger) async throws -> Lookup? {
        let part = AccessTokenSigner.tenantID(of: token).map(Tokens.TenantPart.tenant)
            ?? Tokens.tenantPart(of: token, prefix: SessionStore.accessTokenPrefix)
        switch part {
        case .tenant(let tenantID):
            let rows = try await pool.query(Self.lookupStatement(tenantID: tenantID, hash: hash), tenant: tenantID, logger: logger)
            return try Self.lookup(rows, tenantID: tenantID, hash: hash)
        case .legacy:
            let rows = try await pool.query(
                "SELECT tenant_id, tenant_slug, user_id, username, session_id FROM authenticate_access_token(\(PostgresBytes(hash)))",
                logger: logger)
            guard let row = rows.first else { return nil }
            let (tenantID, slug, userID, username, sessionID) = try row.decode((Int64, String, Int64, String, Int64).self)
            return Lookup(
                identity: Identity(
                    tenantID: tenantID, tenantSlug: slug, userID: userID, username: username, sessionID: sessionID, accessTokenHash: hash),
                epoch: nil, secondsLeft: 0)
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
        SELECT t.slug, u.id, u.username, s.id,
            coalesce((SELECT e.epoch FROM auth_epochs e WHERE e.tenant_id = \(tenantID)), 0),
            extract(epoch FROM tok.expires_at - now())::float8
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
        try lookup(rows, tenantID: tenantID, hash: hash)?.identity
    }

    /// A lookup's row: the identity, the tenant's revocation epoch in the same snapshot, and
    /// the seconds the token has left by the database's clock (what `AccessTokenCache` keeps).
    private static func lookup(_ rows: PostgresRows, tenantID: Int64, hash: [UInt8]) throws -> Lookup? {
        guard let row = rows.first else { return nil }
        let (slug, userID, username, sessionID, epoch, secondsLeft) = try row.decode((String, Int64, String, Int64, Int64, Double).self)
        return Lookup(
            identity: Identity(
                tenantID: tenantID, tenantSlug: slug, userID: userID, username: username, sessionID: sessionID, accessTokenHash: hash),
            epoch: epoch, secondsLeft: secondsLeft)
    }

    struct Lookup {
        let identity: Identity
        /// The tenant's revocation epoch as the lookup read it; nil for a legacy token, not kept.
        let epoch: Int64?
        let secondsLeft: Double
    }

    /// What `AccessTokenCache`'s poller reads of the tenants it keeps tokens of: each one's
    /// revocation epoch (0 before its first revocation), slug and whether it is disabled. Two
    /// statements, not a join: on Citus `tenants` is a reference table, and the outer join of
    /// one with a distributed table is not planned. A tenant gone is absent.
    func tenantStates(_ tenantIDs: [Int64], on pool: PostgresPool, logger: Logger) async throws -> [Int64: AccessTokenCache.TenantState] {
        let epochs = try await pool.query("SELECT tenant_id, epoch FROM auth_epochs WHERE tenant_id = ANY(\(tenantIDs))", logger: logger)
        var epochOf = [Int64: Int64]()
        for row in epochs {
            let (tenantID, epoch) = try row.decode((Int64, Int64).self)
            epochOf[tenantID] = epoch
        }
        let tenants = try await pool.query(
            "SELECT id, slug, disabled_at IS NOT NULL FROM tenants WHERE id = ANY(\(tenantIDs))", logger: logger)
        var states = [Int64: AccessTokenCache.TenantState]()
        for row in tenants {
            let (tenantID, slug, disabled) = try row.decode((Int64, String, Bool).self)
            states[tenantID] = .init(epoch: epochOf[tenantID] ?? 0, slug: slug, disabled: disabled)
        }
        return states
    }

    /// The revocations of `tenantID` above `epoch` (all those retained when nil): what a
    /// replica's poll reads once it saw the tenant's epoch rise (migration 0046).
    func revocations(tenantID: Int64, after epoch: Int64?, on pool: PostgresPool, logger: Logger) async throws -> [AccessTokenCache.Revocation] {
        let rows = try await pool.query(
            """
            SELECT epoch, user_id, session_id FROM auth_revocations
            WHERE tenant_id = \(tenantID) AND epoch > \(epoch ?? 0)
            """, logger: logger)
        return try rows.map { row in
            let (epoch, userID, sessionID) = try row.decode((Int64, Int64?, Int64?).self)
            return AccessTokenCache.Revocation(epoch: epoch, userID: userID, sessionID: sessionID)
        }
    }
}
