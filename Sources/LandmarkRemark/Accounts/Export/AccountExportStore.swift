import Foundation
import Postgres

/// The SQL of a user's export (`GET /v1/me/export`): each row as the JSON the document holds,
/// built by PostgreSQL, so the service only joins pages of text. Every section is read newest
/// first in pages on an index, so a user with 100,000 notes is read a page at a time.
struct AccountExportStore: Sendable {
    /// The document's arrays, in order.
    enum Section: String, CaseIterable, Sendable {
        case sessions, notes, places, reports, blocks, mail, devices, watches, pushes
    }

    /// Where a page ends: the next page starts after it (newest first).
    struct Position: Sendable {
        var createdAt: Date
        var key: Int64
        static let start = Position(createdAt: .distantFuture, key: .max)
    }

    /// The account itself with its identities (never their secrets: Apple's refresh token is left out).
    func account(tenantID: Int64, userID: Int64, on reads: some PostgresQuerying) async throws -> String? {
        try await reads.query("""
            SELECT json_build_object(
                'id', u.id::text, 'username', u.username, 'email', u.email, 'email_verified', u.email_verified_at IS NOT NULL,
                'pending_email', \(UserStore.pendingEmail(tenantID: tenantID)), 'created_at', \(Self.time("u.created_at")),
                'guest', u.guest, 'has_password', u.password_hash IS NOT NULL, 'terms_version', u.terms_version,
                'terms_accepted_at', \(Self.time("u.terms_accepted_at")), 'moderation', u.moderation, 'moderator', u.moderator,
                'time_zone', u.time_zone, 'quiet_hours', \(UserStore.quietHours),
                'identities', coalesce((
                    SELECT json_agg(json_build_object(
                        'provider', i.provider, 'subject', i.subject, 'email', i.email, 'client_id', i.client_id,
                        'linked_at', \(Self.time("i.created_at")), 'last_used_at', \(Self.time("i.last_used_at"))) ORDER BY i.provider)
                    FROM user_identities i WHERE i.tenant_id = \(tenantID) AND i.user_id = u.id), '[]'::json))::text
            FROM users u WHERE u.tenant_id = \(tenantID) AND u.id = \(userID)
            """).first?.decode(String.self, column: 0)
    }

    /// One page of `section` after `position`: each row's position and JSON.
    func page(
        _ section: Section, tenantID: Int64, userID: Int64, after position: Position, limit: Int, on reads: some PostgresQuerying
    ) async throws -> [(Position, String)] {
        let (c, k) = (position.createdAt, position.key)
        let query: PostgresQuery
        switch section {
        case .sessions:
            query = """
                SELECT s.created_at, s.id, json_build_object(
                    'id', s.id::text, 'user_agent', s.user_agent, 'created_at', \(Self.time("s.created_at")),
                    'last_used_at', \(Self.time("s.last_used_at")), 'expires_at', \(Self.time("s.expires_at")),
                    'revoked_at', \(Self.time("s.revoked_at")), 'revoked_reason', s.revoked_reason)::text
                FROM sessions s WHERE s.tenant_id = \(tenantID) AND s.user_id = \(userID) AND (s.created_at, s.id) < (\(c), \(k))
                ORDER BY s.created_at DESC, s.id DESC LIMIT \(limit)
                """
        case .notes:
            query = """
                SELECT n.created_at, n.id, json_build_object(
                    'id', n.id::text, 'body', n.body, 'lat', ST_Y(n.location::geometry), 'lng', ST_X(n.location::geometry),
                    'visibility', n.visibility, 'place_id', n.place_id::text, 'created_at', \(Self.time("n.created_at")),
                    'updated_at', \(Self.time("n.updated_at")), 'moderation', n.moderation)::text
                FROM notes n WHERE n.tenant_id = \(tenantID) AND n.user_id = \(userID) AND (n.created_at, n.id) < (\(c), \(k))
                ORDER BY n.created_at DESC, n.id DESC LIMIT \(limit)
                """
        case .places:
            query = """
                SELECT p.created_at, p.id, json_build_object(
                    'id', p.id::text, 'name', p.name, 'lat', ST_Y(p.location::geometry), 'lng', ST_X(p.location::geometry),
                    'created_at', \(Self.time("p.created_at")), 'updated_at', \(Self.time("p.updated_at")), 'moderation', p.moderation)::text
                FROM places p WHERE p.tenant_id = \(tenantID) AND p.created_by = \(userID) AND (p.created_at, p.id) < (\(c), \(k))
                ORDER BY p.created_at DESC, p.id DESC LIMIT \(limit)
                """
        case .reports:
            query = """
                SELECT r.created_at, r.id, json_build_object(
                    'id', r.id::text, 'target_type', r.target_type, 'target_id', r.target_id::text, 'reason', r.reason,
                    'detail', r.detail, 'state', r.state, 'created_at', \(Self.time("r.created_at")), 'decided_at', \(Self.time("r.decided_at")))::text
                FROM reports r WHERE r.tenant_id = \(tenantID) AND r.reporter_id = \(userID) AND (r.created_at, r.id) < (\(c), \(k))
                ORDER BY r.created_at DESC, r.id DESC LIMIT \(limit)
                """
        case .blocks:
            query = """
                SELECT b.created_at, b.blocked_id, json_build_object(
                    'user_id', b.blocked_id::text, 'username', u.username, 'created_at', \(Self.time("b.created_at")))::text
                FROM blocks b JOIN users u ON u.tenant_id = b.tenant_id AND u.id = b.blocked_id
                WHERE b.tenant_id = \(tenantID) AND b.blocker_id = \(userID) AND (b.created_at, b.blocked_id) < (\(c), \(k))
                ORDER BY b.created_at DESC, b.blocked_id DESC LIMIT \(limit)
                """
        case .mail:
            // What was mailed to the user, never what it said (codes).
            query = """
                SELECT m.created_at, m.id, json_build_object(
                    'kind', m.kind, 'recipient', m.recipient, 'state', m.state, 'created_at', \(Self.time("m.created_at")),
                    'finished_at', \(Self.time("m.finished_at")))::text
                FROM mail_outbox m WHERE m.tenant_id = \(tenantID) AND m.user_id = \(userID) AND (m.created_at, m.id) < (\(c), \(k))
                ORDER BY m.created_at DESC, m.id DESC LIMIT \(limit)
                """
        case .devices:
            // A device has no number of its own: its token's first 60 bits break ties (APNs
            // tokens are random, and a user has at most a handful).
            query = """
                SELECT d.created_at, ('x' || left(d.token, 15))::bit(60)::bigint, json_build_object(
                    'token', d.token, 'platform', d.platform, 'environment', d.environment, 'app_id', d.app_id,
                    'session_id', d.session_id::text, 'created_at', \(Self.time("d.created_at")), 'updated_at', \(Self.time("d.updated_at")))::text
                FROM devices d WHERE d.tenant_id = \(tenantID) AND d.user_id = \(userID)
                  AND (d.created_at, ('x' || left(d.token, 15))::bit(60)::bigint) < (\(c), \(k))
                ORDER BY 1 DESC, 2 DESC LIMIT \(limit)
                """
        case .watches:
            query = """
                SELECT w.created_at, w.id, json_build_object(
                    'id', w.id::text, 'label', w.label, 'lat', ST_Y(w.center::geometry), 'lng', ST_X(w.center::geometry),
                    'radius_m', w.radius_m, 'place_id', w.place_id::text, 'created_at', \(Self.time("w.created_at")),
                    'updated_at', \(Self.time("w.updated_at")))::text
                FROM watches w WHERE w.tenant_id = \(tenantID) AND w.user_id = \(userID) AND (w.created_at, w.id) < (\(c), \(k))
                ORDER BY w.created_at DESC, w.id DESC LIMIT \(limit)
                """
        case .pushes:
            // What was pushed to the user's devices (kept 30 days), never to whom else.
            query = """
                SELECT p.sent_at, p.id, json_build_object(
                    'watch_id', p.watch_id::text, 'notes', p.matches, 'delivered', p.delivered, 'sent_at', \(Self.time("p.sent_at")))::text
                FROM pushes p WHERE p.tenant_id = \(tenantID) AND p.user_id = \(userID) AND (p.sent_at, p.id) < (\(c), \(k))
                ORDER BY p.sent_at DESC, p.id DESC LIMIT \(limit)
                """
        }
        return try await reads.query(query).map { row in
            let (created, key, json) = try row.decode((Date, Int64, String).self)
            return (Position(createdAt: created, key: key), json)
        }
    }

    /// A timestamp as the API writes them (RFC 3339, UTC, milliseconds), or null.
    private static func time(_ column: StaticString) -> PostgresQuery {
        "to_char(\(unsafeSQL: column) AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"
    }
}
