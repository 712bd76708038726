import Postgres
import Synchronization

/// Whether the list shapes that have a function of their own (`notes_nearest()`,
/// `notes_search()`, migration 0020) are read through it instead of the statement: on
/// Citus, where the functions are delegated to the tenant's worker and read there as their
/// owner (the statements, sent on as text, read beneath the shard's policy, where neither
/// the spatial nor the trigram index serves them). Learnt once per process, at the first
/// list of notes, as the event log's mode is: restart replicas after `distribute`.
final class WorkerReads: Sendable {
    private let delegated = Mutex<Bool?>(nil)

    func areDelegated(on connection: some PostgresQuerying) async throws -> Bool {
        if let known = delegated.withLock({ $0 }) { return known }
        let answer = try await connection.query("SELECT tenant_functions_delegated()")[0].decode(Bool.self, column: 0)
        delegated.withLock { $0 = answer }
        return answer
    }
}
