import Logging
import Postgres

/// The database as one tenant sees it: every feature's statements run through here, so
/// row-level security (`app.tenant_id`, migration 0002) always holds the request's tenant,
/// and what the database layer logs carries the request's logger (and so its request id).
extension PostgresPool {
    /// A transaction in which row-level security shows only `tenantID`'s rows: for writes,
    /// and for reads that must share one snapshot.
    func withTenantTransaction<T: Sendable>(
        _ tenantID: Int64, logger: Logger, _ body: (PostgresConnection) async throws -> T
    ) async throws -> T {
        try await withTransaction(settings: Self.tenantSettings(tenantID), logger: logger, body)
    }

    /// `tenantID`'s reads on one connection, each statement a pipelined implicit transaction of
    /// its own: one round trip to PostgreSQL where `withTenantTransaction` takes three. For GET
    /// handlers, whose statements (a username lookup, then a page) need no shared snapshot.
    func withTenantReads<T: Sendable>(
        _ tenantID: Int64, logger: Logger, _ body: (PostgresPipelinedReads) async throws -> T
    ) async throws -> T {
        try await withPipelinedReads(settings: Self.tenantSettings(tenantID), logger: logger, body)
    }

    /// One statement of `tenantID`'s, as one implicit transaction pipelined with the setting:
    /// one round trip. For a read that stands alone (a token lookup).
    @discardableResult
    func query(
        _ query: PostgresQuery, tenant tenantID: Int64, logger: Logger, fileID: StaticString = #fileID, line: UInt = #line
    ) async throws -> PostgresRows {
        try await self.query(query, settings: Self.tenantSettings(tenantID), logger: logger, fileID: fileID, line: line)
    }

    private static func tenantSettings(_ tenantID: Int64) -> [(String, String)] {
        [("app.tenant_id", String(tenantID))]
    }
}
