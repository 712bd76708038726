import Logging
import Postgres

/// Reporting content, and the caller's reports.
struct ReportService: Sendable {
    let pool: PostgresPool
    let reports: ReportStore
    /// Reports one user, and one tenant, may make in an hour (`LR_REPORTS_PER_USER_PER_HOUR`,
    /// `LR_REPORTS_PER_TENANT_PER_HOUR`).
    let perUserPerHour: Int
    let perTenantPerHour: Int

    /// A report, and whether it is new (`201`) or the caller's open report of the target (`200`).
    struct Filed: Sendable {
        let report: Report
        let created: Bool
    }

    /// Files the report, in one transaction with the target locked: the open report already
    /// there, else the checks (the target seen, not one's own, the hourly limits), the report,
    /// and the hold when the target's open reports reach the tenant's threshold.
    func report(_ draft: ReportDraft, by identity: Identity, logger: Logger) async throws -> Filed {
        let (tenantID, reporterID) = (identity.tenantID, identity.userID)
        return try await pool.withTenantTransaction(tenantID, logger: logger) { connection in
            let target = try await draft.target.type.lock(
                id: draft.target.id, tenantID: tenantID, viewerID: reporterID, .noKeyUpdate, on: connection)
            guard let target else { throw SafetyError.targetNotFound(draft.target.type) }
            // Before the visibility check: the report itself hid the target from its reporter.
            if let open = try await reports.openReport(of: draft.target, tenantID: tenantID, reporterID: reporterID, on: connection) {
                return Filed(report: open, created: false)
            }
            guard target.visible else { throw SafetyError.targetNotFound(draft.target.type) }
            guard target.authorID != reporterID else { throw SafetyError.cannotReportOwnContent }
            for (limit, whose) in [(perUserPerHour, reporterID), (perTenantPerHour, nil)] {
                if let wait = try await reports.secondsUntilUnder(limit, tenantID: tenantID, reporterID: whose, on: connection) {
                    throw SafetyError.tooManyReports(retryAfter: wait)
                }
            }
            let report = try await reports.insert(draft, tenantID: tenantID, reporterID: reporterID, on: connection)
            try await reports.log(report, found: target, tenantID: tenantID, on: connection)
            if try await reports.holdIfReported(draft.target, tenantID: tenantID, on: connection) {
                logger.info("held for a moderator", metadata: ["target": "\(draft.target.type.rawValue) \(draft.target.id)"])
            }
            return Filed(report: report, created: true)
        }
    }

    func page(_ page: PageRequest, for identity: Identity, logger: Logger) async throws -> ReportPage {
        try await pool.withTenantReads(identity.tenantID, logger: logger) {
            try await reports.page(page, tenantID: identity.tenantID, reporterID: identity.userID, on: $0)
        }
    }
}
