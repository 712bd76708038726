import Foundation
import Logging
import Postgres

/// The per-tenant queues of the background senders (mail, 0031; pushes, 0050): one sender at a
/// time holds a tenant's queue for a lease it renews, so the tenant's messages go in order and
/// each once; a channel that cannot be used rests the queue (`blocked_until`), counting
/// failures in a row for the back-off.
struct SenderQueues: Sendable {
    /// The table, and its column of failures in a row: program text, never input.
    let table: StaticString
    let failures: StaticString

    /// Takes (or renews) the tenant's queue for `holder` until `until`, unless another sender
    /// holds it or it is resting; returns the failures in a row when taken.
    func hold(tenantID: Int64, holder: String, now: Date, until: Date, on connection: some PostgresQuerying) async throws -> Int? {
        try await connection.query("""
            INSERT INTO \(unsafeSQL: table) AS q (tenant_id, held_by, held_until) VALUES (\(tenantID), \(holder), \(until))
            ON CONFLICT (tenant_id) DO UPDATE SET held_by = excluded.held_by, held_until = excluded.held_until
            WHERE (q.held_until IS NULL OR q.held_until <= \(now) OR q.held_by = \(holder))
              AND (q.blocked_until IS NULL OR q.blocked_until <= \(now))
            RETURNING q.\(unsafeSQL: failures)
            """).first?.decode(Int.self, column: 0)
    }

    /// Lets the queue go; `worked` clears the failures.
    func release(tenantID: Int64, holder: String, worked: Bool, on connection: some PostgresQuerying) async throws {
        try await connection.query("""
            UPDATE \(unsafeSQL: table) SET held_by = NULL, held_until = NULL,
                \(unsafeSQL: failures) = CASE WHEN \(worked) THEN 0 ELSE \(unsafeSQL: failures) END,
                last_error = CASE WHEN \(worked) THEN NULL ELSE last_error END
            WHERE tenant_id = \(tenantID) AND held_by = \(holder)
            """)
    }

    /// The channel could not be used: no sender tries this tenant's queue before `until`.
    func rest(tenantID: Int64, holder: String, until: Date, error: String, on connection: some PostgresQuerying) async throws {
        try await connection.query("""
            UPDATE \(unsafeSQL: table) SET held_by = NULL, held_until = NULL, blocked_until = \(until),
                \(unsafeSQL: failures) = \(unsafeSQL: failures) + 1, last_error = left(\(error), 500)
            WHERE tenant_id = \(tenantID) AND held_by = \(holder)
            """)
    }

    /// How long a channel that cannot be used rests: 5 s doubling per failure in a row, up to `cap`.
    static func rest(failures: Int, cap: Duration) -> Duration {
        min(.seconds(5) * (1 << min(failures, 10)), cap)
    }
}

/// A sender's statements on the tenant's behalf, each a transaction of its own.
struct TenantDB {
    let pool: PostgresPool
    let tenantID: Int64
    let logger: Logger

    func run<T: Sendable>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        try await pool.withTenantTransaction(tenantID, logger: logger, body)
    }
}
