import Credentials
import Logging
import Postgres

/// Stream tickets: a browser's `EventSource` cannot send `Authorization`, so it opens
/// `GET /v1/events?ticket=…` with a ticket made from its access token a moment before.
///
/// A ticket is 32 random bytes (`lr_st_…`), stored by its SHA-256. It works once
/// (redeeming deletes it), for `LR_EVENT_TICKET_TTL_SECONDS`, and only while the access
/// token it was made with is live; the stream it opens then lives as that token does.
/// A URL may end up in a proxy's log or the browser's history, which is why a ticket is
/// worth nothing by the time anyone could read it there.
struct StreamTicketStore: Sendable {
    struct Ticket: Sendable {
        let value: String
        let expiresIn: Int
    }

    let pool: PostgresPool
    let lifetime: Int
    /// Tickets one access token may have waiting: enough for a page that reconnects, few
    /// enough that a loop cannot fill the table.
    static let outstandingPerToken = 20
    static let prefix = "lr_st_"

    /// A new ticket for the caller's access token; nil when the token has too many waiting.
    func issue(for identity: Identity, logger: Logger) async throws -> Ticket? {
        let value = Tokens.randomToken(prefix: Self.prefix)
        // Concurrent requests of one token take turns, so the count they check stays true.
        let lock = identity.accessTokenHash.prefix(8).reduce(Int64(0)) { $0 << 8 | Int64($1) }
        let inserted = try await pool.withTenantTransaction(identity.tenantID, logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(lock))")
            return try await connection.query("""
                INSERT INTO stream_tickets (tenant_id, ticket_hash, access_token_hash, expires_at)
                SELECT \(identity.tenantID), \(PostgresBytes(Tokens.sha256(value))), \(PostgresBytes(identity.accessTokenHash)),
                       now() + make_interval(secs => \(lifetime))
                WHERE (SELECT count(*) FROM stream_tickets
                       WHERE tenant_id = \(identity.tenantID) AND access_token_hash = \(PostgresBytes(identity.accessTokenHash))
                         AND expires_at > now()) < \(Self.outstandingPerToken)
                RETURNING 1
                """).count
        }
        return inserted == 1 ? Ticket(value: value, expiresIn: lifetime) : nil
    }

    /// Who a ticket stands for, spending it; nil for a ticket that is unknown, spent, expired,
    /// or whose access token is no longer live.
    static func redeem(_ ticket: String, on pool: PostgresPool, logger: Logger) async throws -> Identity? {
        guard ticket.hasPrefix(prefix), ticket.utf8.count <= 128 else { return nil }
        let rows = try await pool.query("""
            SELECT tenant_id, tenant_slug, user_id, username, session_id, access_token_hash
            FROM redeem_stream_ticket(\(PostgresBytes(Tokens.sha256(ticket))))
            """, logger: logger)
        guard let row = rows.first else { return nil }
        let (tenantID, slug, userID, username, sessionID, tokenHash) = try row.decode((Int64, String, Int64, String, Int64, PostgresBytes).self)
        return Identity(
            tenantID: tenantID, tenantSlug: slug, userID: userID, username: username, sessionID: sessionID,
            accessTokenHash: tokenHash.bytes)
    }
}
