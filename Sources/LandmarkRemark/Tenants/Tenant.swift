import Hummingbird
import Postgres

/// One app (or organisation) sharing the deployment.
struct Tenant: Sendable {
    let id: Int64
    let slug: String
    let minPasswordLength: Int
}

/// Tenants are global rows (no row-level security): the service reads them to
/// resolve `X-Tenant` before any tenant is set. Operators create them.
struct TenantStore: Sendable {
    let pool: PostgresPool

    func findActive(slug: String) async throws -> Tenant? {
        let rows = try await pool.query("""
            SELECT id, slug, min_password_length FROM tenants
            WHERE slug = \(slug) AND disabled_at IS NULL
            """)
        guard let row = rows.first else { return nil }
        let (id, slug, minimum) = try row.decode((Int64, String, Int).self)
        return Tenant(id: id, slug: slug, minPasswordLength: minimum)
    }

    func find(id: Int64) async throws -> Tenant? {
        let rows = try await pool.query("SELECT id, slug, min_password_length FROM tenants WHERE id = \(id)")
        guard let row = rows.first else { return nil }
        let (id, slug, minimum) = try row.decode((Int64, String, Int).self)
        return Tenant(id: id, slug: slug, minPasswordLength: minimum)
    }

    /// The tenant an unauthenticated call names with `X-Tenant`.
    func require(_ request: Request, context: AppRequestContext) async throws -> Tenant {
        guard let slug = request.headers[.xTenant], !slug.isEmpty else {
            throw AppError.malformed("the X-Tenant header is required for this call")
        }
        // Slugs are short lowercase names; anything else cannot exist, so skip the query.
        guard slug.utf8.count <= 63, let tenant = try await findActive(slug: slug) else {
            throw AppError.tenantNotFound
        }
        context.tenantTag.set(tenant.slug)
        return tenant
    }
}

extension PostgresPool {
    /// A transaction in which row-level security shows only `tenantID`'s rows.
    func withTenant<T: Sendable>(_ tenantID: Int64, _ body: (PostgresConnection) async throws -> T) async throws -> T {
        try await withTransaction(settings: [("app.tenant_id", String(tenantID))], body)
    }

    /// `tenantID`'s reads on one connection, each statement a transaction of its own: one
    /// round trip to PostgreSQL and one hop to the pool's threads, where `withTenant` takes
    /// three and two. For GET handlers, whose statements (a username lookup, then a page)
    /// need no shared snapshot.
    func withReads<T: Sendable>(_ tenantID: Int64, _ body: (PostgresPipelinedReads) async throws -> T) async throws -> T {
        try await withPipelinedReads(settings: [("app.tenant_id", String(tenantID))], body)
    }
}
