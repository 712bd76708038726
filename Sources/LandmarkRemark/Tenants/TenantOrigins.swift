import Logging
import Postgres
import Synchronization

/// Which web origins each tenant lets call the API (CORS, `tenants.allowed_origins`).
///
/// The whole list is small (a few origins for the tenants that have any), so each replica
/// holds all of it and reloads it when it is older than `lifetime`: a request asks memory,
/// never the database, so no flood of made-up origins or tenant names can queue queries
/// or push real answers out of a cache. A change by an operator shows within `lifetime`.
final class TenantOrigins: Sendable {
    /// Origins by tenant slug, and every origin any tenant lists (for preflights).
    struct Snapshot: Sendable {
        var byTenant: [String: Set<String>] = [:]
        var anyTenant: Set<String> = []
    }

    private struct State {
        var snapshot: Snapshot?
        var loadedAt: ContinuousClock.Instant?
        var loading = false
    }

    private let pool: PostgresPool
    private let lifetime: Duration
    private let state = Mutex(State())

    init(pool: PostgresPool, lifetime: Duration = .seconds(10)) {
        self.pool = pool
        self.lifetime = lifetime
    }

    /// Whether the active tenant with this slug lists the origin.
    func allows(_ origin: String, tenant slug: String, logger: Logger) async throws -> Bool {
        try await current(logger: logger).byTenant[slug]?.contains(origin) == true
    }

    /// Whether any active tenant lists the origin: a preflight names no tenant.
    func anyTenantAllows(_ origin: String, logger: Logger) async throws -> Bool {
        try await current(logger: logger).anyTenant.contains(origin)
    }

    /// The snapshot, reloaded by one caller when it has aged; the others meanwhile use the
    /// one they have. Only the very first load is waited for by everyone who needs it.
    private func current(logger: Logger) async throws -> Snapshot {
        let now = ContinuousClock.now
        let (snapshot, reload): (Snapshot?, Bool) = state.withLock { state in
            let fresh = state.loadedAt.map { now - $0 < lifetime } ?? false
            guard !fresh, !state.loading else { return (state.snapshot, false) }
            state.loading = true
            return (state.snapshot, true)
        }
        if !reload, let snapshot { return snapshot }
        if !reload {
            // Another caller is loading the first snapshot: ask the database as well, once.
            return try await load(logger: logger)
        }
        do {
            let loaded = try await load(logger: logger)
            state.withLock { state in
                state.snapshot = loaded
                state.loadedAt = .now
                state.loading = false
            }
            return loaded
        } catch {
            // Keep serving the last list; try again after a short while, not at every request.
            state.withLock { state in
                state.loading = false
                state.loadedAt = state.snapshot == nil ? nil : ContinuousClock.now - lifetime + .seconds(1)
            }
            if let snapshot { return snapshot }
            throw error
        }
    }

    private func load(logger: Logger) async throws -> Snapshot {
        let rows = try await pool.query(
            "SELECT slug, allowed_origins FROM tenants WHERE disabled_at IS NULL AND cardinality(allowed_origins) > 0",
            logger: logger)
        var snapshot = Snapshot()
        for row in rows {
            let (slug, origins) = try row.decode((String, [String]).self)
            snapshot.byTenant[slug] = Set(origins)
            snapshot.anyTenant.formUnion(origins)
        }
        return snapshot
    }
}
