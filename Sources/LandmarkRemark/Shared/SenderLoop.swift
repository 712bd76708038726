import Foundation
import Logging
import Postgres
import ServiceLifecycle
import Synchronization

/// What every background sender (mail, pushes) does around its own sending: a pass every poll
/// interval (sooner when poked), each due tenant's queue taken in turn and held while it is
/// drained, let go when done, rested when the channel cannot be used, and let go first when the
/// replica stops, so another need not wait out the lease.
final class SenderLoop: Sendable {
    let queues: SenderQueues
    let pool: PostgresPool
    let clock: WallClock
    let lease: Duration
    let pollInterval: Duration
    let logger: Logger
    /// Who holds a queue: unique per sender, so a sender that died is told from a live one.
    let holder: String
    /// Whether work was made here since the sender last looked, and its nap to cut short.
    private let wake = Mutex<(poked: Bool, nap: Task<Void, Never>?)>((false, nil))

    init(queues: SenderQueues, pool: PostgresPool, clock: WallClock, lease: Duration, pollInterval: Duration, logger: Logger) {
        self.queues = queues
        self.pool = pool
        self.clock = clock
        self.lease = lease
        self.pollInterval = pollInterval
        self.logger = logger
        holder = "\(ProcessInfo.processInfo.hostName.prefix(60))/\(getpid())/\(UUID().uuidString.prefix(8))"
    }

    /// Tells an idle sender that work was just made.
    func poke() {
        wake.withLock { state in
            state.poked = true
            state.nap?.cancel()
        }
    }

    /// Runs `pass` until the service shuts down: then, the poll interval or less when poked.
    /// A pass that fails is logged as `failure` and tried again at the next.
    func run(failure: String, _ pass: @escaping @Sendable () async throws -> Void) async {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await pass()
                } catch is CancellationError {
                    return
                } catch {
                    self.logger.warning("\(failure)", metadata: ["error": "\(error)"])
                }
                await self.nap()
            }
        }
    }

    private func nap() async {
        let nap = Task { _ = try? await Task.sleep(for: self.pollInterval) }
        let poked = wake.withLock { state in
            state.nap = nap
            defer { state.poked = false }
            return state.poked
        }
        if poked { nap.cancel() }
        await withTaskCancellationHandler { await nap.value } onCancel: { nap.cancel() }
        wake.withLock { $0.nap = nil }
    }

    /// Drains each tenant in turn; one tenant's failure (logged as `failure`) does not hold up
    /// the others'.
    func drainEach(_ tenants: [Int64], failure: String, _ drain: (Int64) async throws -> Void) async throws {
        for tenantID in tenants {
            try Task.checkCancellation()
            do {
                try await drain(tenantID)
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                logger.warning("\(failure)", metadata: ["tenant_id": "\(tenantID)", "error": "\(error)"])
            }
        }
    }

    /// Runs `body` (given the queue's failures in a row) while this sender holds the tenant's
    /// queue; nothing when another sender holds it or it rests. `body` lets the queue go or
    /// rests it; one that throws leaves it held until its lease ends, unless the replica is
    /// stopping: then it is let go first, in a task of its own that the cancellation does not
    /// reach.
    func whileHolding(tenantID: Int64, _ body: (TenantDB, _ failures: Int) async throws -> Void) async throws {
        let db = TenantDB(pool: pool, tenantID: tenantID, logger: logger)
        do {
            // Inside the `do`: a cancellation while the hold is in flight may still have taken
            // the queue, and letting it go (only if ours) spares the others a lease's wait.
            guard let failures = try await renew(db) else { return }
            try await body(db, failures)
        } catch where Task.isCancelled {
            await Task { try? await self.release(db, worked: false) }.value
            throw error
        }
    }

    /// Takes or renews the queue for another lease; nil when this sender lost it.
    func renew(_ db: TenantDB) async throws -> Int? {
        try await db.run { connection in
            let now = self.clock.now()
            return try await self.queues.hold(
                tenantID: db.tenantID, holder: self.holder, now: now, until: now + self.lease.timeInterval, on: connection)
        }
    }

    /// Lets the queue go; `worked` clears its failures.
    func release(_ db: TenantDB, worked: Bool) async throws {
        try await db.run { try await self.queues.release(tenantID: db.tenantID, holder: self.holder, worked: worked, on: $0) }
    }

    /// The channel cannot be used: no sender tries the queue for `duration`.
    func rest(_ db: TenantDB, for duration: Duration, error: String) async throws {
        try await db.run { try await self.queues.rest(
            tenantID: db.tenantID, holder: self.holder, until: self.clock.now() + duration.timeInterval, error: error, on: $0) }
    }
}
