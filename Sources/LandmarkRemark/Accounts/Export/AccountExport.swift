import Foundation
import Hummingbird
import Logging
import Postgres

/// `GET /v1/me/export`: everything the service holds about the caller, as one JSON document
/// (GDPR articles 15 and 20), streamed: each section is read a page at a time and written as
/// it is read, so the service holds one page, not the user's 100,000 notes. The sections are
/// read one after another on one connection, each page a statement of its own: a note
/// written meanwhile may or may not be in it, as in any export taken while the account is used.
struct AccountExport: Sendable {
    let pool: PostgresPool
    let store = AccountExportStore()
    /// Rows per statement and per write.
    let pageSize: Int

    func response(for identity: Identity, logger: Logger) async throws -> Response {
        // The account first, before the status goes out: a gone account is 401, not a broken stream.
        guard let account = try await pool.withTenantReads(identity.tenantID, logger: logger, {
            try await store.account(tenantID: identity.tenantID, userID: identity.userID, on: $0)
        }) else { throw AccountError.sessionEnded }
        let body = ResponseBody { [self] writer in
            try await writer.write(ByteBuffer(string: "{\"exported_at\":\"\(Timestamp.format(Date()))\",\"account\":\(account)"))
            try await pool.withTenantReads(identity.tenantID, logger: logger) { reads in
                for section in AccountExportStore.Section.allCases {
                    try await writer.write(ByteBuffer(string: ",\"\(section.rawValue)\":["))
                    var position = AccountExportStore.Position.start
                    var first = true
                    while true {
                        let rows = try await store.page(
                            section, tenantID: identity.tenantID, userID: identity.userID, after: position, limit: pageSize, on: reads)
                        guard let last = rows.last else { break }
                        var chunk = ""
                        for (_, json) in rows {
                            if !first { chunk += "," }
                            chunk += json
                            first = false
                        }
                        try await writer.write(ByteBuffer(string: chunk))
                        position = last.0
                        if rows.count < pageSize { break }
                    }
                    try await writer.write(ByteBuffer(string: "]"))
                }
            }
            try await writer.write(ByteBuffer(string: "}"))
            try await writer.finish(nil)
        }
        return Response(
            status: .ok,
            headers: [
                .contentType: "application/json", .cacheControl: "no-store",
                .contentDisposition: "attachment; filename=\"\(identity.tenantSlug)-\(identity.username)-export.json\"",
            ],
            body: body)
    }
}
