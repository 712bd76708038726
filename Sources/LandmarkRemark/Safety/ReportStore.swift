import Foundation
import Postgres

/// The reports table (migration 0024) and the holding of a reported target, in the caller's
/// tenant transaction (the target itself: `ReportTargetSQL`). What a report hides is `Audience`'s, which every read composes.
struct ReportStore: Sendable {
    static let reportColumns: PostgresQuery = "r.id, r.target_type, r.target_id, r.reason, r.detail, r.state, r.created_at"

    static func report(from row: PostgresRow) throws -> Report {
        let id = try row.decode(Int64.self, column: 0)
        // The table's CHECKs allow only these values.
        let type = ReportTargetType(rawValue: try row.decode(String.self, column: 1)) ?? .note
        let targetID = try row.decode(Int64.self, column: 2)
        let reason = ReportReason(rawValue: try row.decode(String.self, column: 3)) ?? .other
        let detail = try row.decode(String?.self, column: 4)
        let state = Report.State(rawValue: try row.decode(String.self, column: 5)) ?? .open
        let createdAt = try row.decode(Date.self, column: 6)
        return Report(
            id: id, target: ReportTarget(type: type, id: targetID), reason: reason, detail: detail, state: state, createdAt: createdAt)
    }

    /// The reporter's open report of the target, if any.
    func openReport(of target: ReportTarget, tenantID: Int64, reporterID: Int64, on connection: PostgresConnection) async throws -> Report? {
        let rows = try await connection.query("""
            SELECT \(Self.reportColumns) FROM reports r
            WHERE r.tenant_id = \(tenantID) AND r.reporter_id = \(reporterID)
              AND r.target_type = \(target.type.rawValue) AND r.target_id = \(target.id) AND r.state = 'open'
            """)
        return try rows.first.map(Self.report(from:))
    }

    /// Seconds until a report leaves the last hour's count, when `limit` reports of the
    /// reporter (or, with `reporterID` nil, of the tenant) are in it already; nil when under it.
    func secondsUntilUnder(_ limit: Int, tenantID: Int64, reporterID: Int64?, on connection: PostgresConnection) async throws -> Int? {
        let whose: PostgresQuery = reporterID.map { "AND r.reporter_id = \($0)" } ?? ""
        let rows = try await connection.query("""
            SELECT ceil(extract(epoch FROM r.created_at + interval '1 hour' - now()))::int8
            FROM reports r
            WHERE r.tenant_id = \(tenantID) \(whose) AND r.created_at > now() - interval '1 hour'
            ORDER BY r.created_at DESC
            OFFSET \(limit - 1) LIMIT 1
            """)
        return try rows.first.map { max(1, try $0.decode(Int.self, column: 0)) }
    }

    func insert(_ draft: ReportDraft, tenantID: Int64, reporterID: Int64, on connection: PostgresConnection) async throws -> Report {
        let rows = try await connection.query("""
            INSERT INTO reports AS r (tenant_id, reporter_id, target_type, target_id, reason, detail)
            VALUES (\(tenantID), \(reporterID), \(draft.target.type.rawValue), \(draft.target.id), \(draft.reason.rawValue), \(draft.detail))
            RETURNING \(Self.reportColumns)
            """)
        return try Self.report(from: rows[0])
    }

    /// Writes the report to the moderators' log with the target's content and author as the
    /// report found them, and never the reporter.
    func log(_ report: Report, found: LockedTarget, tenantID: Int64, on connection: PostgresConnection) async throws {
        try await connection.query("""
            INSERT INTO moderation_log (tenant_id, kind, target_type, target_id, content, author_id, author_name, reason)
            VALUES (\(tenantID), 'report', \(report.target.type.rawValue), \(report.target.id), \(found.content),
                    \(found.authorID), \(found.authorName), \(report.reason.rawValue))
            """)
    }

    /// Holds the target for a moderator when its open reports reach the tenant's threshold;
    /// whether it did now.
    func holdIfReported(_ target: ReportTarget, tenantID: Int64, on connection: PostgresConnection) async throws -> Bool {
        // The threshold first, alone: on Citus `tenants` is a reference table, and a write to a
        // distributed table reads none in the same statement.
        let threshold = try await connection.query("SELECT report_threshold FROM tenants WHERE id = \(tenantID)")[0]
            .decode(Int.self, column: 0)
        let rows = try await connection.query("""
            UPDATE \(target.type.table) SET moderation = 'pending'
            WHERE tenant_id = \(tenantID) AND id = \(target.id) AND moderation IS NULL
              AND (SELECT count(*) FROM reports r
                   WHERE r.tenant_id = \(tenantID) AND r.target_type = \(target.type.rawValue)
                     AND r.target_id = \(target.id) AND r.state = 'open') >= \(threshold)
            RETURNING 1
            """)
        return !rows.isEmpty
    }

    /// The reporter's reports, newest first, in pages keyed on `(created_at, id)`.
    func page(_ page: PageRequest, tenantID: Int64, reporterID: Int64, on reads: some PostgresQuerying) async throws -> ReportPage {
        let keyset: PostgresQuery = page.timeKeyset("r.created_at", "r.id").map { "\n  AND \($0)" } ?? ""
        let rows = try await reads.query("""
            SELECT \(Self.reportColumns), (extract(epoch FROM r.created_at) * 1000000)::bigint
            FROM reports r
            WHERE r.tenant_id = \(tenantID) AND r.reporter_id = \(reporterID)\(keyset)
            ORDER BY r.created_at DESC, r.id DESC
            LIMIT \(page.limit + 1)
            """)
        return try page.page(from: rows, keyColumn: 7) { row, _ in
            let report = try Self.report(from: row)
            return (report, report.id)
        }
    }
}
