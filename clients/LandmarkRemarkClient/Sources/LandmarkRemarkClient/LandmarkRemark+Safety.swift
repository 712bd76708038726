import Foundation
import LandmarkRemarkAPI
import OpenAPIRuntime

/// Blocking and reporting (App Store Review Guideline 1.2): the service enforces both, in
/// every list, search, map and stream, so the app needs no filter of its own.
extension LandmarkRemark {
    /// Reports a note, a place or a user to the tenant's moderators. The target is hidden
    /// from you at once; reporting it again returns the same open report.
    @discardableResult
    public func report(_ target: ReportTarget, reason: ReportReason, detail: String? = nil) async throws -> Report {
        try await Self.perform {
            let body = Components.Schemas.CreateReportRequest(
                target: target.schema, reason: Components.Schemas.ReportReason(rawValue: reason.rawValue) ?? .other, detail: detail)
            let output = try await api.createReport(body: .json(body))
            if case .ok(let ok) = output { return Report(try ok.body.json) }
            return Report(try output.created.body.json)
        }
    }

    /// Your reports, newest first, with what became of each.
    public func myReports(pageSize: Int? = nil) -> Pages<Report> {
        Pages { cursor in
            try await Self.perform {
                let page = try await self.api.listMyReports(query: .init(limit: pageSize, cursor: cursor)).ok.body.json
                return Page(items: page.items.map(Report.init), nextCursor: page.next_cursor)
            }
        }
    }

    /// Blocks a user, both ways: neither of you sees the other's notes or profile any more.
    public func block(username: String) async throws {
        _ = try await Self.perform { try await api.blockUser(path: .init(username: username)).noContent }
    }

    public func unblock(username: String) async throws {
        _ = try await Self.perform { try await api.unblockUser(path: .init(username: username)).noContent }
    }

    /// The users you blocked, newest first.
    public func blocks(pageSize: Int? = nil) -> Pages<Author> {
        Pages { cursor in
            try await Self.perform {
                let page = try await self.api.listBlocks(query: .init(limit: pageSize, cursor: cursor)).ok.body.json
                return Page(items: page.items.map { Author(id: $0.id, username: $0.username) }, nextCursor: page.next_cursor)
            }
        }
    }
}

/// For the tenant's moderators (an operator grants the role).
extension LandmarkRemark {
    /// Reported targets with open reports, the longest waiting first.
    public func moderationQueue(pageSize: Int? = nil) -> Pages<ModerationItem> {
        Pages { cursor in
            try await Self.perform {
                let page = try await self.api.moderationQueue(query: .init(limit: pageSize, cursor: cursor)).ok.body.json
                return Page(items: page.items.map(ModerationItem.init), nextCursor: page.next_cursor)
            }
        }
    }

    /// Decides on a reported target, closing its open reports; the decision as the log keeps it.
    @discardableResult
    public func decide(_ target: ReportTarget, _ action: ModerationAction, note: String? = nil) async throws -> ModerationLogEntry {
        try await Self.perform {
            let body: Components.Schemas.ModerationDecisionRequest = switch action {
            case .dismiss: .init(action: .dismiss, note: note)
            case .remove: .init(action: .remove, note: note)
            case .suspendAuthor(let until): .init(action: .suspend_author, until: until, note: note)
            case .banAuthor: .init(action: .ban_author, note: note)
            }
            let output = try await api.decideModeration(path: .init(_type: target.pathType, id: target.id), body: .json(body))
            return ModerationLogEntry(try output.ok.body.json)
        }
    }

    /// Every report and decision, the newest first.
    public func moderationLog(pageSize: Int? = nil) -> Pages<ModerationLogEntry> {
        Pages { cursor in
            try await Self.perform {
                let page = try await self.api.moderationLog(query: .init(limit: pageSize, cursor: cursor)).ok.body.json
                return Page(items: page.items.map(ModerationLogEntry.init), nextCursor: page.next_cursor)
            }
        }
    }
}

/// The tenant's terms and contact (App Store Review Guideline 1.2).
extension LandmarkRemark {
    /// The tenant's name, terms, contact and ways to sign in; no sign-in needed.
    public func tenantInfo() async throws -> TenantInfo {
        try await Self.perform { TenantInfo(try await open.getTenant(headers: .init(X_hyphen_Tenant: tenant)).ok.body.json) }
    }

    /// Accepts the tenant's current terms (`TenantInfo.termsVersion`).
    @discardableResult
    public func acceptTerms(version: String) async throws -> Me {
        try await Self.perform { Me(try await api.acceptTerms(body: .json(.init(version: version))).ok.body.json) }
    }
}
