import Synchronization

/// A tenant's word list (migration 0026) as of one version of its row (`TenantStore.rulesVersion`).
struct WriteRules: Sendable {
    let filter: ContentFilter
    let version: String
}

/// The word lists this replica read lately, one per tenant, so that a create need not read
/// its tenant's again before it writes (issue 38: a note's create in one round trip).
///
/// Nothing here can go stale: a create that uses kept rules writes only behind a check, in its
/// own pipeline and transaction, that finds the tenant's row at the version they were read at
/// (`TenantStore.keptRulesCheck`), and reads them again otherwise. The terms and email rules
/// are not kept: the check reads them itself.
final class WriteRulesCache: Sendable {
    private let kept = Mutex([Int64: WriteRules]())
    /// Tenants kept at most: beyond, a create reads its rules each time.
    let capacity: Int

    init(capacity: Int = 10_000) {
        self.capacity = capacity
    }

    func rules(tenantID: Int64) -> WriteRules? {
        kept.withLock { $0[tenantID] }
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
