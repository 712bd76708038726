import Foundation
import Postgres

/// The senders' SQL over what matching queued (migrations 0049, 0050, 0052): the notes'
/// watchers turned into matches, the due matches as they stand now, the watcher's live devices,
/// and the record of each push. Every statement names its tenant (Citus routes it to one shard).
struct PushOutbox: Sendable {
    static let queues = SenderQueues(table: "push_queues", failures: "failures")

    /// A pending match, and whether it may still be pushed: its note public, not held, its
    /// author neither disabled nor held nor hidden from the watcher since it was matched.
    struct Due: Sendable {
        let id: Int64
        let userID: Int64
        let watchID: Int64
        let noteID: Int64
        /// The watch's label, or its place's name.
        let area: String?
        let author: String
        let body: String
        let pushable: Bool
        /// When the watcher's quiet hours end, if they are in them now.
        let quietUntil: Date?
    }

    func dueTenants(now: Date, on pool: PostgresPool) async throws -> [Int64] {
        try await pool.query("SELECT push_due_tenants(\(now))").map { try $0.decode(Int64.self, column: 0) }
    }

    /// Turns up to `limit` of the tenant's matched notes (`push_notes`, one row per note, as the
    /// write left them) into matches, one per watcher who may be told; returns the notes taken.
    func expand(tenantID: Int64, limit: Int, on connection: some PostgresQuerying) async throws -> Int {
        try await connection.query("SELECT expand_push_notes(\(tenantID), \(limit)::integer)")[0].decode(Int.self, column: 0)
    }

    /// The tenant's due matches, user by user, oldest first.
    func due(tenantID: Int64, now: Date, limit: Int, on connection: some PostgresQuerying) async throws -> [Due] {
        try await connection.query("""
            SELECT m.id, m.user_id, m.watch_id, m.note_id, coalesce(w.label, p.name), a.username, left(n.body, 200),
                   n.visibility = 'public' AND n.moderation IS NULL AND NOT n.author_disabled AND a.moderation IS NULL
                   AND NOT EXISTS (
                       SELECT FROM hidden_authors h WHERE h.tenant_id = m.tenant_id AND h.viewer_id = m.user_id AND h.author_id = n.user_id)
                   AND NOT EXISTS (
                       SELECT FROM reports r WHERE r.tenant_id = m.tenant_id AND r.reporter_id = m.user_id
                         AND r.target_type = 'note' AND r.target_id = n.id),
                   quiet_until(\(now), wu.time_zone, wu.quiet_start, wu.quiet_end)
            FROM push_matches m
            JOIN users wu ON wu.tenant_id = m.tenant_id AND wu.id = m.user_id
            JOIN watches w ON w.tenant_id = m.tenant_id AND w.id = m.watch_id
            LEFT JOIN places p ON p.tenant_id = w.tenant_id AND p.id = w.place_id
            JOIN notes n ON n.tenant_id = m.tenant_id AND n.id = m.note_id
            JOIN users a ON a.tenant_id = n.tenant_id AND a.id = n.user_id
            WHERE m.tenant_id = \(tenantID) AND m.state = 'pending' AND m.next_attempt_at <= \(now)
            ORDER BY m.user_id, m.id
            LIMIT \(limit)
            """).map { row in
            let (id, userID, watchID, noteID, area, author, body, pushable) =
                try row.decode((Int64, Int64, Int64, Int64, String?, String, String, Bool).self)
            return Due(
                id: id, userID: userID, watchID: watchID, noteID: noteID, area: area, author: author, body: body, pushable: pushable,
                quietUntil: try row.decode(Date?.self, column: 8))
        }
    }

    /// How many pushes the user got since `since`, and the first of them.
    func sent(tenantID: Int64, userID: Int64, since: Date, on connection: some PostgresQuerying) async throws -> (count: Int, first: Date?) {
        let row = try await connection.query("""
            SELECT count(*)::int, min(sent_at) FROM pushes WHERE tenant_id = \(tenantID) AND user_id = \(userID) AND sent_at > \(since)
            """)[0]
        return try row.decode((Int, Date?).self)
    }

    struct Device: Sendable {
        let token: String
        let environment: String
        let appID: String
    }

    /// The user's devices whose session is live: a session that ended stops its pushes.
    func devices(tenantID: Int64, userID: Int64, now: Date, on connection: some PostgresQuerying) async throws -> [Device] {
        try await connection.query("""
            SELECT d.token, d.environment, d.app_id FROM devices d
            JOIN sessions s ON s.tenant_id = d.tenant_id AND s.id = d.session_id
            WHERE d.tenant_id = \(tenantID) AND d.user_id = \(userID) AND s.revoked_at IS NULL AND s.expires_at > \(now)
            ORDER BY d.updated_at DESC
            """).map { row in
            let (token, environment, appID) = try row.decode((String, String, String).self)
            return Device(token: token, environment: environment, appID: appID)
        }
    }

    /// APNs called the token gone: it is never tried again.
    func removeDevice(tenantID: Int64, token: String, on connection: some PostgresQuerying) async throws {
        try await connection.query("DELETE FROM devices WHERE tenant_id = \(tenantID) AND token = \(token)")
    }

    /// Ends matches without a push: `dropped`.
    func drop(tenantID: Int64, ids: [Int64], now: Date, on connection: some PostgresQuerying) async throws {
        try await connection.query("""
            UPDATE push_matches SET state = 'dropped', finished_at = \(now)
            WHERE tenant_id = \(tenantID) AND id = ANY(\(ids)) AND state = 'pending'
            """)
    }

    /// Leaves matches for later (the user's hour is full, or their quiet hours are on).
    func postpone(tenantID: Int64, ids: [Int64], until: Date, on connection: some PostgresQuerying) async throws {
        try await connection.query("""
            UPDATE push_matches SET next_attempt_at = \(until) WHERE tenant_id = \(tenantID) AND id = ANY(\(ids)) AND state = 'pending'
            """)
    }

    /// Records a push and ends the matches it carried: `sent` alone, `collapsed` in a summary.
    func record(
        tenantID: Int64, userID: Int64, watchID: Int64, matchIDs: [Int64], delivered: Int, unregistered: Int, now: Date,
        on connection: some PostgresQuerying
    ) async throws {
        let pushID = try await connection.query("""
            INSERT INTO pushes (tenant_id, user_id, watch_id, matches, delivered, unregistered, sent_at)
            VALUES (\(tenantID), \(userID), \(watchID), \(matchIDs.count), \(delivered), \(unregistered), \(now))
            RETURNING id
            """)[0].decode(Int64.self, column: 0)
        try await connection.query("""
            UPDATE push_matches SET state = \(matchIDs.count == 1 ? "sent" : "collapsed"), push_id = \(pushID), finished_at = \(now)
            WHERE tenant_id = \(tenantID) AND id = ANY(\(matchIDs)) AND state = 'pending'
            """)
    }
}
