import Logging
import Postgres
import ServiceLifecycle

/// Folds the cluster grid's deltas into its cells (`fold_note_grid(tenant, batch)`, migrations
/// 0014 and 0016) on a short timer, so a clusters read adds only the few deltas written since.
/// Every replica runs one; the database lets one fold of a tenant run at a time, and the
/// others find nothing to do. One tenant at a time, in statements that name it: on Citus
/// each fold runs on the tenant's worker.
struct NoteGridFolder: Service {
    let pool: PostgresPool
    /// Zero: never (tests fold by hand).
    let interval: Duration
    let logger: Logger
    static let batch = 10_000

    func run() async throws {
        guard interval > .zero else {
            try? await gracefulShutdown()
            return
        }
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    // A full batch means more are waiting: go on at once.
                    while try await fold() { try Task.checkCancellation() }
                } catch is CancellationError {
                    return
                } catch {
                    logger.warning("folding the cluster grid failed", metadata: ["error": "\(error)"])
                }
                try await Task.sleep(for: interval)
            }
        }
    }

    /// One batch of each tenant with deltas; whether some tenant had a full batch (more wait).
    @discardableResult
    func fold() async throws -> Bool {
        let tenants = try await pool.query("SELECT note_grid_tenants_to_fold()", logger: logger).map { try $0.decode(Int64.self, column: 0) }
        var more = false
        for tenant in tenants {
            // The batch binds as an int4: fold_note_grid(bigint, integer).
            let moved = try await pool.query("SELECT fold_note_grid(\(tenant), \(Int32(Self.batch)))", logger: logger)[0]
                .decode(Int.self, column: 0)
            more = more || moved == Self.batch
        }
        return more
    }
}
