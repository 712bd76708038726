import Postgres
import Synchronization

/// Whether nearest pages go through `notes_nearest()` (migration 0020) instead of the
/// statement: on Citus, where it is delegated to the tenant's worker and runs there as its
/// owner with its plans kept (the statement, sent on as text, is planned again on both
/// nodes and read the whole shard beneath its policy). Learnt once per process, at the
/// first nearest page, as the event log's mode is: restart replicas after `distribute`.
final class NearestRoute: Sendable {
    private let delegated = Mutex<Bool?>(nil)

    func isDelegated(on connection: some PostgresQuerying) async throws -> Bool {
        if let known = delegated.withLock({ $0 }) { return known }
        let answer = try await connection.query("SELECT notes_nearest_delegated()")[0].decode(Bool.self, column: 0)
        delegated.withLock { $0 = answer }
        return answer
    }
}
