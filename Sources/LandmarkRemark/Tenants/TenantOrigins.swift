import Logging
import Postgres
import Synchronization

/// Which web origins each tenant lets call the API (CORS, `tenants.allowed_origins`),
/// remembered for a few seconds: a browser app sends `Origin` on most of its calls, and
/// the answer changes only when an operator runs `tenant set … allowed_origins`.
final class TenantOrigins: Sendable {
    private struct Entry {
        let allowed: Bool
        let expires: ContinuousClock.Instant
    }

    private let pool: PostgresPool
    private let lifetime: Duration
    /// Keyed by "tenant origin" (and " origin" for any tenant); bounded, since both halves
    /// come from the request.
    private let entries = Mutex<[String: Entry]>([:])
    private static let capacity = 10_000

    init(pool: PostgresPool, lifetime: Duration = .seconds(10)) {
        self.pool = pool
        self.lifetime = lifetime
    }

    /// Whether the active tenant with this slug lists the origin.
    func allows(_ origin: String, tenant slug: String, logger: Logger) async throws -> Bool {
        guard slug.utf8.count <= 63 else { return false }
        return try await remembered("\(slug) \(origin)") {
            try await pool.query("""
                SELECT 1 FROM tenants
                WHERE slug = \(slug) AND disabled_at IS NULL AND allowed_origins @> ARRAY[\(origin)]::text[]
                """, logger: logger).count > 0
        }
    }

    /// Whether any active tenant lists the origin: a preflight names no tenant.
    func anyTenantAllows(_ origin: String, logger: Logger) async throws -> Bool {
        try await remembered(" \(origin)") {
            try await pool.query("SELECT origin_allowed_by_any_tenant(\(origin))", logger: logger)[0].decode(Bool.self, column: 0)
        }
    }

    private func remembered(_ key: String, _ lookup: () async throws -> Bool) async throws -> Bool {
        let now = ContinuousClock.now
        if let entry = entries.withLock({ $0[key] }), entry.expires > now { return entry.allowed }
        let allowed = try await lookup()
        entries.withLock { entries in
            if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = Entry(allowed: allowed, expires: now + lifetime)
        }
        return allowed
    }
}
