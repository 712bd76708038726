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

extension WriteRulesCache {
    /// Runs a write that the tenant's policy screens (`text` in `field`), in at most two
    /// attempts: first under the rules kept from an earlier read, behind their check and
    /// without reading them (a create's one round trip); when nothing is kept, the kept rules
    /// refuse the text, or the check finds them out of date, again with the policy read in the
    /// write's own transaction, and its rules kept for the next write.
    ///
    /// `attempt` runs the whole transaction each time; it asks `screening` whether the text is
    /// held and sends its write through `screening.guarding`.
    func screened<Result>(
        _ text: String?, field: String, tenantID: Int64, userID: Int64,
        _ attempt: (_ screening: WriteScreening) async throws -> Result
    ) async throws -> Result {
        // A refusal by kept rules is not final: they may be out of date, so the policy is read.
        if let rules = rules(tenantID: tenantID), let held = try? rules.filter.holds(text, field: field) {
            do {
                return try await attempt(WriteScreening(
                    text: text, field: field, tenantID: tenantID, userID: userID, cache: self,
                    kept: (held, TenantStore.keptRulesCheck(rules, tenantID: tenantID, userID: userID))))
            } catch where TenantStore.rulesChanged(error) {
                forget(tenantID: tenantID)
            }
        }
        return try await attempt(WriteScreening(text: text, field: field, tenantID: tenantID, userID: userID, cache: self, kept: nil))
    }
}

/// One attempt of `WriteRulesCache.screened`: whether the text is held, and how the write is sent.
struct WriteScreening: Sendable {
    fileprivate let text: String?
    fileprivate let field: String
    fileprivate let tenantID: Int64
    fileprivate let userID: Int64
    fileprivate let cache: WriteRulesCache
    /// Under kept rules: what they say of the text, and the check the write must pass.
    fileprivate let kept: (held: Bool, check: PostgresQuery)?

    /// Whether the text is held for a moderator. Under kept rules, known without a statement
    /// (so a transaction that has sent nothing yet still sends everything in one pipeline);
    /// otherwise the policy is read on `connection`, in the write's transaction, and throws when
    /// the terms, the email rule or the word list refuse the write.
    func held(on connection: PostgresConnection) async throws -> Bool {
        if let kept { return kept.held }
        let policy = try await TenantStore().writePolicy(tenantID: tenantID, userID: userID, on: connection)
        if let rules = policy.rules { cache.keep(rules, tenantID: tenantID) }
        return try policy.holds(text, field: field)
    }

    /// Where to send the write: under kept rules, behind their check in the same pipeline.
    func guarding(_ write: any PostgresQuerying) -> any PostgresQuerying {
        kept.map { write.checked(by: $0.check) } ?? write
    }
}
