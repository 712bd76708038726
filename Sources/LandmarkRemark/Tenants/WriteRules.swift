import Postgres
import Synchronization

/// A tenant's word list (migration 0026) as of one version of its row (`TenantStore.rulesVersion`).
struct WriteRules: Sendable {
    let filter: ContentFilter
    let version: String
}

/// The word lists this replica read lately, one per tenant, so that a create need not read
/// its tenant's again before it writes (issue 38: a note's create in one round trip).
///
/// Nothing here can go stale: a create that uses kept rules writes only if its own statement
/// finds the tenant's row at the version they were read at (`NoteStore.create(…, rules:)`),
/// and reads them again otherwise. The terms and email rules are not kept: that statement
/// checks them itself, in its own snapshot.
final class WriteRulesCache: Sendable {
    private let kept = Mutex([Int64: WriteRules]())
    /// Set once a guarded write could not be planned: Citus 13.2 refuses the guarded
    /// `INSERT … SELECT` with bound values (SQLSTATE 42P18, "could not determine data type of
    /// parameter"). The replica then reads the policy before every write, as before issue 38.
    private let guardsRefused = Atomic<Bool>(false)
    /// Tenants kept at most: beyond, a create reads its rules each time.
    let capacity: Int

    init(capacity: Int = 10_000) {
        self.capacity = capacity
    }

    func rules(tenantID: Int64) -> WriteRules? {
        guard !guardsRefused.load(ordering: .relaxed) else { return nil }
        return kept.withLock { $0[tenantID] }
    }

    /// Whether `error` is the database refusing to plan a guarded write (not the write's own
    /// failure): the caller stops using kept rules and writes the plain way.
    static func refusesGuards(_ error: any Error) -> Bool {
        guard let error = error as? PostgresError else { return false }
        return error.sqlState == "42P18" || error.sqlState == "0A000"
    }

    func refuseGuards() {
        guardsRefused.store(true, ordering: .relaxed)
        kept.withLock { $0.removeAll() }
    }

    func keep(_ rules: WriteRules, tenantID: Int64) {
        kept.withLock { kept in
            guard kept[tenantID] != nil || kept.count < capacity else { return }
            kept[tenantID] = rules
        }
    }

    /// Drops a tenant's rules that a create found out of date.
    func forget(tenantID: Int64) {
        _ = kept.withLock { $0.removeValue(forKey: tenantID) }
    }
}
