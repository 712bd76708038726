import Foundation
import Postgres

/// The moderators' SQL (migration 0025): who moderates, the queue of open reports by target,
/// decisions and their effects, and the audit log.
struct ModerationStore: Sendable {
    func isModerator(tenantID: Int64, userID: Int64, on connection: some PostgresQuerying) async throws -> Bool {
        let rows = try await connection.query("""
            SELECT moderator FROM users WHERE tenant_id = \(tenantID) AND id = \(userID) AND disabled_at IS NULL
            """)
        return try rows.first?.decode(Bool.self, column: 0) ?? false
    }

    /// The content's text, its author's id and name, and its hold, for a target `g` of type
    /// `g.target_type` and id `g.target_id`: one branch answers.
    private static func content(tenantID: Int64) -> PostgresQuery {
        let branches = ReportTargetType.allCases.map { type in
            type.content(tenantID: tenantID, id: "g.target_id", when: "g.target_type = \(type.rawValue)")
        }
        return branches.dropFirst().reduce(branches[0]) { "\($0)\nUNION ALL\n\($1)" }
    }

    /// Every target with open reports, the longest waiting first, keyed on its first report.
    func queue(_ page: PageRequest, tenantID: Int64, on reads: some PostgresQuerying) async throws -> ModerationQueuePage {
        let keyset: PostgresQuery = page.timeKeyset("g.first_at", "g.first_id", oldestFirst: true).map { "WHERE \($0)" } ?? ""
        let rows = try await reads.query("""
            WITH targets AS (
                SELECT r.target_type, r.target_id, count(*) AS reports, min(r.created_at) AS first_at, min(r.id) AS first_id,
                       array_agg(r.reason) AS reasons
                FROM reports r
                WHERE r.tenant_id = \(tenantID) AND r.state = 'open'
                GROUP BY r.target_type, r.target_id
            )
            SELECT g.target_type, g.target_id, c.content, c.author_id, c.author_name, c.moderation, g.reports, g.reasons,
                   g.first_at, (extract(epoch FROM g.first_at) * 1000000)::bigint, g.first_id
            FROM targets g
            LEFT JOIN LATERAL (\(Self.content(tenantID: tenantID))) c ON true
            \(keyset)
            ORDER BY g.first_at, g.first_id
            LIMIT \(page.limit + 1)
            """)
        var items: [ModerationQueueItem] = []
        var last: KeysetCursor.Key?
        for row in rows.prefix(page.limit) {
            let type = ReportTargetType(rawValue: try row.decode(String.self, column: 0)) ?? .note
            let authorID = try row.decode(Int64?.self, column: 3)
            let authorName = try row.decode(String?.self, column: 4)
            let given = try row.decode([String].self, column: 7)
            let firstAt = try row.decode(Date.self, column: 8)
            items.append(ModerationQueueItem(
                target: ReportTarget(type: type, id: try row.decode(Int64.self, column: 1)),
                content: try row.decode(String?.self, column: 2),
                author: authorID.flatMap { id in authorName.map { UserSummary(id: id, username: $0) } },
                moderation: try row.decode(String?.self, column: 5).flatMap(ModerationQueueItem.Moderation.init(rawValue:)),
                openReports: try row.decode(Int.self, column: 6),
                reasons: Self.mostGivenFirst(given),
                firstReportedAt: firstAt, dueAt: firstAt.addingTimeInterval(24 * 3600)))
            last = .newest(createdMicros: try row.decode(Int64.self, column: 9), id: try row.decode(Int64.self, column: 10))
        }
        let next = rows.count > page.limit ? last.map { KeysetCursor(key: $0).encoded(fingerprint: page.fingerprint) } : nil
        return ModerationQueuePage(items: items, nextCursor: next)
    }

    /// Each reason once, the most given first (ties in the contract's order).
    static func mostGivenFirst(_ given: [String]) -> [ReportReason] {
        let counts = Dictionary(given.map { ($0, 1) }, uniquingKeysWith: +)
        return ReportReason.allCases.filter { counts[$0.rawValue] != nil }
            .enumerated().sorted { (counts[$0.element.rawValue]!, -$0.offset) > (counts[$1.element.rawValue]!, -$1.offset) }
            .map(\.element)
    }

    /// Shows a held target again.
    func release(_ target: ReportTarget, tenantID: Int64, on connection: PostgresConnection) async throws {
        try await connection.query("""
            UPDATE \(target.type.table) SET moderation = NULL WHERE tenant_id = \(tenantID) AND id = \(target.id)
            """)
    }

    /// Deletes a note or a place for everyone (its events tell open streams).
    func remove(_ target: ReportTarget, tenantID: Int64, on connection: PostgresConnection) async throws {
        try await connection.query("DELETE FROM \(target.type.table) WHERE tenant_id = \(tenantID) AND id = \(target.id)")
    }

    /// Disables the account until `until` (nil: for good) and ends its sessions: its access
    /// tokens fail from the next request, its streams at their next heartbeat. `least` keeps
    /// an earlier disabling's time (Citus refuses `now()` inside `coalesce`).
    func disable(userID: Int64, until: Date?, tenantID: Int64, on connection: PostgresConnection) async throws {
        try await connection.query("""
            UPDATE users SET disabled_at = least(disabled_at, now()), suspended_until = \(until), moderation = NULL
            WHERE tenant_id = \(tenantID) AND id = \(userID)
            """)
        try await connection.query("""
            UPDATE sessions SET revoked_at = now(), revoked_reason = 'moderator'
            WHERE tenant_id = \(tenantID) AND user_id = \(userID) AND revoked_at IS NULL
            """)
    }

    /// Closes the target's open reports as `state` (`actioned` or `dismissed`); how many.
    @discardableResult
    func closeReports(of target: ReportTarget, as state: Report.State, tenantID: Int64, on connection: PostgresConnection) async throws -> Int {
        try await connection.query("""
            UPDATE reports SET state = \(state.rawValue), decided_at = now()
            WHERE tenant_id = \(tenantID) AND target_type = \(target.type.rawValue) AND target_id = \(target.id) AND state = 'open'
            """).affectedRows
    }

    static let logColumns: PostgresQuery = """
        l.id, l.kind, l.target_type, l.target_id, l.author_id, l.author_name, l.content, l.reason, l.action,
        l.moderator_id, l.moderator_name, l.until, l.note, l.created_at
        """

    static func entry(from row: PostgresRow) throws -> ModerationLogEntry {
        func user(_ idColumn: Int) throws -> UserSummary? {
            let id = try row.decode(Int64?.self, column: idColumn)
            let name = try row.decode(String?.self, column: idColumn + 1)
            return id.flatMap { id in name.map { UserSummary(id: id, username: $0) } }
        }
        // The table's CHECKs allow only these values.
        return ModerationLogEntry(
            id: try row.decode(Int64.self, column: 0),
            kind: ModerationLogEntry.Kind(rawValue: try row.decode(String.self, column: 1)) ?? .report,
            target: ReportTarget(
                type: ReportTargetType(rawValue: try row.decode(String.self, column: 2)) ?? .note, id: try row.decode(Int64.self, column: 3)),
            author: try user(4),
            content: try row.decode(String?.self, column: 6),
            reason: try row.decode(String?.self, column: 7).flatMap(ModerationLogEntry.Reason.init(rawValue:)),
            action: try row.decode(String?.self, column: 8).flatMap(ModerationLogEntry.Action.init(rawValue:)),
            moderator: try user(9),
            until: try row.decode(Date?.self, column: 11),
            note: try row.decode(String?.self, column: 12),
            createdAt: try row.decode(Date.self, column: 13))
    }

    /// Logs a decision with the target as it was (`found`), or none when it was gone already.
    func logDecision(
        _ decision: ModerationDecision, on target: ReportTarget, found: LockedTarget?, moderator: Identity, on connection: PostgresConnection
    ) async throws -> ModerationLogEntry {
        let rows = try await connection.query("""
            INSERT INTO moderation_log AS l (tenant_id, kind, target_type, target_id, author_id, author_name, action,
                                             moderator_id, moderator_name, until, note, content)
            VALUES (\(moderator.tenantID), 'decision', \(target.type.rawValue), \(target.id), \(found?.authorID), \(found?.authorName),
                    \(decision.action.rawValue), \(moderator.userID), \(moderator.username), \(decision.until), \(decision.note),
                    \(found?.content))
            RETURNING \(Self.logColumns)
            """)
        return try Self.entry(from: rows[0])
    }

    /// The log, the newest first, keyed on `(created_at, id)`.
    func log(_ page: PageRequest, tenantID: Int64, on reads: some PostgresQuerying) async throws -> ModerationLogPage {
        let keyset: PostgresQuery = page.timeKeyset("l.created_at", "l.id").map { "\n  AND \($0)" } ?? ""
        let rows = try await reads.query("""
            SELECT \(Self.logColumns), (extract(epoch FROM l.created_at) * 1000000)::bigint
            FROM moderation_log l
            WHERE l.tenant_id = \(tenantID)\(keyset)
            ORDER BY l.created_at DESC, l.id DESC
            LIMIT \(page.limit + 1)
            """)
        return try page.page(from: rows, keyColumn: 14) { row, _ in
            let entry = try Self.entry(from: row)
            return (entry, entry.id)
        }
    }
}
