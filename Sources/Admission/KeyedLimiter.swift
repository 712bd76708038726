import Synchronization

/// Bounded concurrency per key: at most `limit` holders of a key at once; callers past it
/// wait in arrival order, for at most `queueTimeout`.
///
/// One caller may claim slots under several keys at once (a user's and its tenant's): it is
/// admitted when every one of them has room, and holds them all until it releases. A freed
/// slot goes to the earliest waiter that now fits, so a caller blocked on a busy key of its
/// own never holds up callers of other keys. Keys with nothing in flight are forgotten, so
/// the table stays as small as what runs.
///
/// - A waiter past `queueTimeout`, or one arriving when `maxWaiting` already wait, fails
///   with `Failure.busy`; a cancelled waiter leaves the queue at once with `CancellationError`.
/// - After `close()`, waiters and new callers fail with `Failure.closed`.
///
/// The hashing pool (one key, its thread count) and the service's fair shares (of the
/// database pool per user and tenant, of hashing per client address and tenant) use it.
public final class KeyedLimiter<Key: Hashable & Sendable>: Sendable {
    /// One slot of `key`, which allows `limit` holders at once.
    public struct Claim: Sendable, Hashable {
        public let key: Key
        public let limit: Int

        public init(_ key: Key, limit: Int) {
            precondition(limit > 0, "a key needs at least one slot")
            self.key = key
            self.limit = limit
        }
    }

    public enum Failure: Error, Sendable, Equatable {
        /// The queue timeout passed, or the queue was full.
        case busy
        /// The limiter was closed.
        case closed
    }

    public let queueTimeout: Duration
    public let maxWaiting: Int

    private struct Waiter {
        let id: UInt64
        let claims: [Claim]
        let deadline: ContinuousClock.Instant
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var inFlight: [Key: Int] = [:]
        /// Arrival order; removal by id is linear, which is fine at `maxWaiting` sizes.
        var waiters: [Waiter] = []
        var nextID: UInt64 = 0
        var closed = false
        /// Whether the one task that fails waiters past their deadline is running.
        var reaping = false

        func fits(_ claims: [Claim]) -> Bool {
            claims.allSatisfy { inFlight[$0.key, default: 0] < $0.limit }
        }

        mutating func take(_ claims: [Claim]) {
            for claim in claims { inFlight[claim.key, default: 0] += 1 }
        }
    }

    private let state = Mutex(State())

    public init(queueTimeout: Duration, maxWaiting: Int = 1024) {
        precondition(maxWaiting >= 0, "maxWaiting must not be negative")
        self.queueTimeout = queueTimeout
        self.maxWaiting = maxWaiting
    }

    /// Holders of `key` now.
    public func inFlight(_ key: Key) -> Int { state.withLock { $0.inFlight[key, default: 0] } }

    /// Callers waiting now.
    public var waiting: Int { state.withLock { $0.waiters.count } }

    /// Runs `body` holding one slot of every claim; the slots are freed however it ends.
    public func withSlots<T>(_ claims: [Claim], _ body: () async throws -> T) async throws -> T {
        try await acquire(claims)
        defer { release(claims) }
        return try await body()
    }

    /// Takes one slot of every claim, waiting for them if need be. Pair with `release`.
    public func acquire(_ claims: [Claim]) async throws {
        let id = try state.withLock { state -> UInt64? in
            if state.closed { throw Failure.closed }
            if state.fits(claims) {
                state.take(claims)
                return nil
            }
            state.nextID += 1
            return state.nextID
        }
        guard let id else { return }
        let deadline = ContinuousClock.now + queueTimeout
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (outcome, startReaper) = state.withLock { state -> (Result<Void, any Error>?, Bool) in
                    // Checked under the lock: cancellation sets the flag before running the
                    // handler, which takes this lock, so one of the two sees the other.
                    if Task.isCancelled { return (.failure(CancellationError()), false) }
                    if state.closed { return (.failure(Failure.closed), false) }
                    if state.fits(claims) {
                        state.take(claims)
                        return (.success(()), false)
                    }
                    if state.waiters.count >= maxWaiting { return (.failure(Failure.busy), false) }
                    state.waiters.append(Waiter(id: id, claims: claims, deadline: deadline, continuation: continuation))
                    defer { state.reaping = true }
                    return (nil, !state.reaping)
                }
                if startReaper { startReaping() }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            fail(id, with: CancellationError())
        }
    }

    /// Frees the slots `acquire` took, handing them to the earliest waiters that now fit.
    public func release(_ claims: [Claim]) {
        let admitted = state.withLock { state -> [Waiter] in
            for claim in claims {
                let count = state.inFlight[claim.key, default: 1] - 1
                state.inFlight[claim.key] = count > 0 ? count : nil
            }
            var admitted: [Waiter] = []
            var index = 0
            while index < state.waiters.count {
                if state.fits(state.waiters[index].claims) {
                    let waiter = state.waiters.remove(at: index)
                    state.take(waiter.claims)
                    admitted.append(waiter)
                } else {
                    index += 1
                }
            }
            return admitted
        }
        for waiter in admitted { waiter.continuation.resume() }
    }

    /// Fails every waiter and every later caller with `Failure.closed`.
    public func close() {
        let waiters = state.withLock { state -> [Waiter] in
            state.closed = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.continuation.resume(throwing: Failure.closed) }
    }

    private func fail(_ id: UInt64, with error: any Error) {
        let waiter = state.withLock { state -> Waiter? in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return state.waiters.remove(at: index)
        }
        waiter?.continuation.resume(throwing: error)
    }

    /// One task fails the waiters whose deadline passed, for all of them: it sleeps until the
    /// earliest deadline and ends when no one waits (as `PostgresPool` does for its waiters).
    private func startReaping() {
        Task { [weak self] in
            while let next = self?.failExpiredWaiters() {
                try? await Task.sleep(until: next, clock: .continuous)
            }
        }
    }

    private func failExpiredWaiters() -> ContinuousClock.Instant? {
        let now = ContinuousClock.now
        let (expired, next) = state.withLock { state -> ([Waiter], ContinuousClock.Instant?) in
            let expired = state.waiters.filter { $0.deadline <= now }
            if !expired.isEmpty { state.waiters.removeAll { $0.deadline <= now } }
            let next = state.waiters.lazy.map(\.deadline).min()
            if next == nil { state.reaping = false }
            return (expired, next)
        }
        for waiter in expired { waiter.continuation.resume(throwing: Failure.busy) }
        return next
    }
}
