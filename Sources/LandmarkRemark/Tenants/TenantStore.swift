import Logging
import Postgres

/// One app (or organisation) sharing the deployment.
struct Tenant: Sendable {
    let id: Int64
    let slug: String
    let minPasswordLength: Int
    let guestsEnabled: Bool
}

/// Tenants are global rows (no row-level security): the service reads them to
/// resolve `X-Tenant` before any tenant is set, each with one statement on the pool it is
/// given (no tenant to set, no transaction). Operators create them.
struct TenantStore: Sendable {
    /// The active tenant an unauthenticated call names with `X-Tenant`.
    func active(named slug: String?, on pool: PostgresPool, logger: Logger) async throws -> Tenant {
        guard let slug, !slug.isEmpty else { throw TenantError.headerMissing }
        // Slugs are short lowercase names; anything else cannot exist, so skip the query.
        guard slug.utf8.count <= 63 else { throw TenantError.notFound }
        let rows = try await pool.query(
            "SELECT id, slug, min_password_length, guests_enabled FROM tenants WHERE slug = \(slug) AND disabled_at IS NULL", logger: logger)
        guard let row = rows.first else { throw TenantError.notFound }
        return try Self.tenant(from: row)
    }

    func find(id: Int64, on pool: PostgresPool, logger: Logger) async throws -> Tenant? {
        let rows = try await pool.query("SELECT id, slug, min_password_length, guests_enabled FROM tenants WHERE id = \(id)", logger: logger)
        return try rows.first.map(Self.tenant(from:))
    }

    /// The tenant's word list and what it does (migration 0026), in the caller's transaction.
    func contentFilter(tenantID: Int64, on connection: some PostgresQuerying) async throws -> ContentFilter {
        let rows = try await connection.query("SELECT filter_action, filter_words FROM tenants WHERE id = \(tenantID)")
        guard let row = rows.first else { return .none }
        let words = try row.decode([String].self, column: 1)
        guard !words.isEmpty else { return .none }
        return ContentFilter(action: ContentFilter.Action(rawValue: try row.decode(String.self, column: 0)) ?? .refuse, words: words)
    }

    private static func tenant(from row: PostgresRow) throws -> Tenant {
        let (id, slug, minimum, guests) = try row.decode((Int64, String, Int, Bool).self)
        return Tenant(id: id, slug: slug, minPasswordLength: minimum, guestsEnabled: guests)
    }
}
