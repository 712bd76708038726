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

    private static func tenant(from row: PostgresRow) throws -> Tenant {
        let (id, slug, minimum, guests) = try row.decode((Int64, String, Int, Bool).self)
        return Tenant(id: id, slug: slug, minPasswordLength: minimum, guestsEnabled: guests)
    }
}
