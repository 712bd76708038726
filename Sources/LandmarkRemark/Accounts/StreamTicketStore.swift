import Credentials
import Logging
import Postgres

/// Stream tickets: a browser's `EventSource` cannot send `Authorization`, so it opens
/// `GET /v1/events?ticket=…` with a ticket made from its access token a moment before.
///
/// A ticket is its tenant and 32 random bytes (`lr_st_<tenant>_…`), stored by its SHA-256.
/// It works once (redeeming deletes it), for `LR_EVENT_TICKET_TTL_SECONDS`, and only while
/// the access token it was made with is live; the stream it opens then lives as that token does.
/// A URL may end up in a proxy's log or the browser's history, which is why a ticket is
/// worth nothing by the time anyone could read it there.
struct StreamTicketStore: Sendable {
    /// Tickets one access token may have waiting: enough for a page that reconnects, few
    /// enough that a loop cannot fill the table.
    static let outstandingPerToken = 20
    static let prefix = "lr_st_"

    /// Stores a new ticket `value` for the caller's access token, living `lifetime` seconds;
    /// false when the token has too many waiting. Runs in the caller's tenant transaction,
    /// whose lock makes concurrent requests of one token take turns, so the count stays true.
    func issue(_ value: String, for identity: Identity, lifetime: Int, on connection: PostgresConnection) async throws -> Bool {
        let lock = identity.accessTokenHash.prefix(8).reduce(Int64(0)) { $0 << 8 | Int64($1) }
        try await connection.query("SELECT pg_advisory_xact_lock(\(lock))")
        return try await connection.query("""
            INSERT INTO stream_tickets (tenant_id, ticket_hash, access_token_hash, expires_at)
            SELECT \(identity.tenantID), \(PostgresBytes(Tokens.sha256(value))), \(PostgresBytes(identity.accessTokenHash)),
                   now() + make_interval(secs => \(lifetime))
            WHERE (SELECT count(*) FROM stream_tickets
                   WHERE tenant_id = \(identity.tenantID) AND access_token_hash = \(PostgresBytes(identity.accessTokenHash))
                     AND expires_at > now()) < \(Self.outstandingPerToken)
            RETURNING 1
            """).count == 1
    }

    /// Spends the ticket with this hash in `tenantID` (what redeem_stream_ticket does, migration
    /// 0012): deleted whatever it is worth; its access token's hash when it had not expired.
    func spend(_ hash: PostgresBytes, tenantID: Int64, on connection: PostgresConnection) async throws -> [UInt8]? {
        let spent = try await connection.query("""
            WITH spent AS (
                DELETE FROM stream_tickets WHERE tenant_id = \(tenantID) AND ticket_hash = \(hash)
                RETURNING access_token_hash, expires_at
            )
            -- now() outside RETURNING: Citus takes only immutable expressions there.
            SELECT access_token_hash, expires_at > now() FROM spent
            """)
        guard let row = spent.first else { return nil }
        let (tokenHash, fresh) = try row.decode((PostgresBytes, Bool).self)
        return fresh ? tokenHash.bytes : nil
    }

    /// A ticket without a tenant part, issued before tickets named theirs: found by hash
    /// alone, through the SECURITY DEFINER function (one statement on the pool). Such tickets
    /// lived seconds; this goes with the legacy indexes (migration 0016).
    func redeemLegacy(_ hash: PostgresBytes, on pool: PostgresPool, logger: Logger) async throws -> Identity? {
        let rows = try await pool.query("""
            SELECT tenant_id, tenant_slug, user_id, username, session_id, access_token_hash
            FROM redeem_stream_ticket(\(hash))
            """, logger: logger)
        guard let row = rows.first else { return nil }
        let (tenantID, slug, userID, username, sessionID, tokenHash) = try row.decode((Int64, String, Int64, String, Int64, PostgresBytes).self)
        return Identity(
            tenantID: tenantID, tenantSlug: slug, userID: userID, username: username, sessionID: sessionID,
            accessTokenHash: tokenHash.bytes)
    }
}

/// Issuing and redeeming stream tickets: the transactions around `StreamTicketStore` and
/// the access-token check a redeemed ticket passes (`AccessTokenStore`).
struct StreamTicketService: Sendable {
    let pool: PostgresPool
    let lifetime: Int
    let tickets = StreamTicketStore()
    let tokens: AccessTokenStore

    /// A new ticket for the caller's access token; nil when the token has too many waiting.
    func issue(for identity: Identity, logger: Logger) async throws -> StreamTicket? {
        let value = Tokens.tenantToken(prefix: StreamTicketStore.prefix, tenantID: identity.tenantID)
        let issued = try await pool.withTenantTransaction(identity.tenantID, logger: logger) {
            try await tickets.issue(value, for: identity, lifetime: lifetime, on: $0)
        }
        return issued ? StreamTicket(ticket: value, expiresIn: lifetime) : nil
    }

    /// Who a ticket stands for, spending it; nil for a ticket that is unknown, spent, expired,
    /// or whose access token is no longer live. The ticket is spent whatever the lookup
    /// finds, in the same transaction, as the function's one statement was.
    func redeem(_ ticket: String, logger: Logger) async throws -> Identity? {
        guard ticket.utf8.count <= 128, let part = Tokens.tenantPart(of: ticket, prefix: StreamTicketStore.prefix) else { return nil }
        let hash = PostgresBytes(Tokens.sha256(ticket))
        guard case .tenant(let tenantID) = part else { return try await tickets.redeemLegacy(hash, on: pool, logger: logger) }
        return try await pool.withTenantTransaction(tenantID, logger: logger) { connection in
            guard let tokenHash = try await tickets.spend(hash, tenantID: tenantID, on: connection) else { return nil }
            return try await tokens.identity(tenantID: tenantID, accessTokenHash: tokenHash, on: connection)
        }
    }
}
