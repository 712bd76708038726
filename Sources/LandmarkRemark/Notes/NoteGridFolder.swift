import Logging
import Postgres
import ServiceLifecycle

/// Folds the cluster grid's deltas into its cells (`fold_note_grid()`, migration 0014) on a
/// short timer, so a clusters read adds only the few deltas written since. Every replica
/// runs one; the database lets one fold at a time and the others find nothing to do.
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
                    while try await fold() == Self.batch { try Task.checkCancellation() }
                } catch is CancellationError {
                    return
                } catch {
                    logger.warning("folding the cluster grid failed", metadata: ["error": "\(error)"])
                }
                try await Task.sleep(for: interval)
            }
        }
    }

    /// One batch; how many deltas it moved.
    func fold() async throws -> Int {
        // An Int binds as bigint, and no fold_note_grid(bigint) exists: the batch is an int4.
        try await pool.query("SELECT fold_note_grid(\(Int32(Self.batch)))", logger: logger)[0].decode(Int.self, column: 0)
    }
}
