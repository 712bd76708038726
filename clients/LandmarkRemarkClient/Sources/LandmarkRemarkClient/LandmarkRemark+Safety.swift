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
