import Postgres

/// Slows down password guessing without handing strangers a way to lock an owner out.
///
/// Every password check (login, `PATCH /v1/me` with `password.current`, `DELETE /v1/me`)
/// first reserves one attempt under three keys, in the statement that finds the account
/// (so the account is resolved exactly as the lookup resolves it, by PostgreSQL's `lower()`):
///
/// - the account from this address (`pair:`): `failuresPerPair` in the window, then blocked
///   for 15 s, doubling with every further failure up to 15 min;
/// - the address (`addr:`), whatever it tries: `failuresPerAddress`, the same way;
/// - the account from everywhere (`acct:<id>`): `failuresPerAccount`, the same way, except
///   from an address that logged in to this account in the last `knownAddressDays`: a
///   distributed guesser runs into it, the owner at their usual address does not.
///
/// A login that names no account is keyed by its `lower()` (`login:`) and costs exactly the
/// same. A key that is blocked refuses the attempt (`429`) and nothing is counted. Because the
/// reservation comes before the hash and takes the rows' locks, N parallel guesses never get
/// more than the limit evaluated. A right password clears the pair and gives the other keys
/// their attempt back (so one valid account cannot launder an address's guesses at others);
/// an attempt that got no verdict (hashing saturated) is given back entirely.
///
/// Counts live in PostgreSQL (`login_failures`, `login_addresses`; migration 0010), so every
/// replica sees them; `purge_expired()` removes them once they no longer matter.
struct LoginThrottle: Sendable {
    let failuresPerPair: Int
    let failuresPerAccount: Int
    let failuresPerAddress: Int
    /// Failures older than this start a fresh count.
    static let windowSeconds = 15 * 60
    /// How long a successful login makes its address known to the account (and
    /// `purge_expired()` keeps the record: change both together).
    static let knownAddressDays = 30

    /// One reserved attempt: the account it named (nil: none) and the keys it holds.
    struct Attempt: Sendable {
        let user: UserRecord?
        let pairKey: String
        let keys: [String]
        let address: String
    }

    /// The address as the throttle counts it: IPv6 by its /64, which one subscriber
    /// usually holds whole (privacy addresses rotate inside it).
    static func addressKey(_ address: String) -> String {
        guard let bytes = TrustedProxies.parse(address), bytes.count == 16 else { return address }
        let groups = stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
        return groups.joined(separator: ":") + "::/64"
    }

    /// Finds the account `login` names and reserves an attempt; `429 rate_limited` (nothing
    /// counted) while any of its keys is blocked. Runs inside the caller's tenant transaction,
    /// which must end right after: the reservation holds the keys' row locks until then.
    func reserve(tenantID: Int64, login: String, address: String, on connection: PostgresConnection) async throws -> Attempt {
        let bucket = Self.addressKey(address)
        // In the upsert, "now" is excluded.first_failure_at (the now() the row was proposed
        // with), and time moves by seconds_after (0016): Citus refuses functions that are
        // not immutable in DO UPDATE SET (it evaluates the others on the coordinator, and
        // cannot inside that clause), and timestamptz ± interval is only stable.
        let next: PostgresQuery = """
            CASE WHEN f.first_failure_at < seconds_after(excluded.first_failure_at, -\(Double(Self.windowSeconds)))
                 THEN 1 ELSE f.failures + 1 END
            """
        // Rows are inserted (and so locked) in key order, as in every transaction here: no deadlocks.
        let rows = try await connection.query("""
            WITH target AS (
                \(UserStore.findForLogin(tenantID: tenantID, login: login))
            ),
            subject AS (
                SELECT coalesce('acct:' || (SELECT id FROM target), 'login:' || lower(\(login))) AS key,
                       EXISTS (SELECT 1 FROM login_addresses a JOIN target t ON a.user_id = t.id
                               WHERE a.tenant_id = \(tenantID) AND a.address = \(bucket)
                                 AND a.last_login_at > now() - \(Self.knownAddressDays) * interval '1 day') AS known
            ),
            wanted AS (
                SELECT 'pair:' || s.key || '@' || \(bucket) AS key FROM subject s
                UNION ALL SELECT 'addr:' || \(bucket)
                UNION ALL SELECT s.key FROM subject s WHERE NOT s.known
            ),
            reserved AS (
                INSERT INTO login_failures AS f (tenant_id, key, failures, first_failure_at, blocked_until)
                SELECT \(tenantID), w.key, 1, c.now, \(block(count: "1", key: "w.key", now: "c.now"))
                FROM wanted w CROSS JOIN (SELECT now() AS now) c ORDER BY w.key
                ON CONFLICT (tenant_id, key) DO UPDATE SET
                    failures = \(next),
                    first_failure_at = CASE WHEN f.first_failure_at < seconds_after(excluded.first_failure_at, -\(Double(Self.windowSeconds)))
                                            THEN excluded.first_failure_at ELSE f.first_failure_at END,
                    blocked_until = \(block(count: next, key: "f.key", now: "excluded.first_failure_at"))
                WHERE f.blocked_until IS NULL OR f.blocked_until <= excluded.first_failure_at
                RETURNING f.key
            )
            SELECT (SELECT array_agg(key ORDER BY key) FROM wanted), (SELECT count(*) FROM reserved),
                   (SELECT 'pair:' || key || '@' || \(bucket) FROM subject), t.*
            FROM (VALUES (1)) AS one LEFT JOIN target t ON true
            """)
        let row = rows[0]
        let keys = try row.decode([String].self, column: 0)
        guard try row.decode(Int.self, column: 1) == keys.count else {
            // Some key is blocked: report how long, then the caller's rollback undoes the rest.
            let blocked = try await connection.query("""
                SELECT ceil(extract(epoch FROM max(blocked_until) - now()))::int8 FROM login_failures
                WHERE tenant_id = \(tenantID) AND key = ANY(\(keys)) AND blocked_until > now()
                """)
            throw AccountError.tooManyFailures(retryAfter: max(1, try blocked.first?.decode(Int?.self, column: 0) ?? 1))
        }
        return Attempt(
            user: try UserStore.decodeIfPresent(row, from: 3), pairKey: try row.decode(String.self, column: 2), keys: keys, address: bucket)
    }

    /// `CASE` giving `blocked_until` for a key that has reached `count`: blocked once at its limit.
    private func block(count: PostgresQuery, key: PostgresQuery, now: PostgresQuery) -> PostgresQuery {
        let limit: PostgresQuery = """
            (CASE WHEN \(key) LIKE 'pair:%' THEN \(failuresPerPair) WHEN \(key) LIKE 'addr:%' THEN \(failuresPerAddress)
                  ELSE \(failuresPerAccount) END)
            """
        return """
            CASE WHEN \(count) >= \(limit)
                 THEN seconds_after(\(now), least(900, 15 * power(2, least(\(count) - \(limit), 10)))) END
            """
    }

    /// The right password: the pair starts afresh, the other keys get this attempt back,
    /// and the address becomes known to the account.
    func succeeded(_ attempt: Attempt, userID: Int64, tenantID: Int64, on connection: PostgresConnection) async throws {
        try await lock(attempt, tenantID: tenantID, on: connection)
        try await connection.query("""
            WITH cleared AS (
                DELETE FROM login_failures WHERE tenant_id = \(tenantID) AND key = \(attempt.pairKey)
            ),
            refunded AS (
                UPDATE login_failures SET failures = greatest(failures - 1, 0), blocked_until = NULL
                WHERE tenant_id = \(tenantID) AND key = ANY(\(attempt.keys)) AND key <> \(attempt.pairKey)
            )
            INSERT INTO login_addresses (tenant_id, user_id, address) VALUES (\(tenantID), \(userID), \(attempt.address))
            ON CONFLICT (tenant_id, user_id, address) DO UPDATE SET last_login_at = excluded.last_login_at
            """)
    }

    /// No verdict was reached (the hash could not run): the attempt guessed nothing, so every key gets it back.
    func refund(_ attempt: Attempt, tenantID: Int64, on connection: PostgresConnection) async throws {
        try await lock(attempt, tenantID: tenantID, on: connection)
        try await connection.query("""
            UPDATE login_failures SET failures = greatest(failures - 1, 0), blocked_until = NULL
            WHERE tenant_id = \(tenantID) AND key = ANY(\(attempt.keys))
            """)
    }

    /// Locks the attempt's rows in key order, the order `reserve` takes them in.
    private func lock(_ attempt: Attempt, tenantID: Int64, on connection: PostgresConnection) async throws {
        try await connection.query("""
            SELECT 1 FROM login_failures WHERE tenant_id = \(tenantID) AND key = ANY(\(attempt.keys)) ORDER BY key FOR UPDATE
            """)
    }
}
