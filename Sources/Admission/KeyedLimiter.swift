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
///   with `Failure.busy`; a cancelled waiter leaves the queue at once with `CancellationError`
///   (the waiting is `BoundedWaitQueue`'s).
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

    public var queueTimeout: Duration { queue.timeout }
    public var maxWaiting: Int { queue.maxWaiting }

    private struct State: Sendable {
        var inFlight: [Key: Int] = [:]
        var closed = false

        func fits(_ claims: [Claim]) -> Bool {
            claims.allSatisfy { inFlight[$0.key, default: 0] < $0.limit }
        }

        mutating func take(_ claims: [Claim]) {
            for claim in claims { inFlight[claim.key, default: 0] += 1 }
        }
    }

    /// The waiters, in arrival order, with the slots they wait for.
    private let queue: BoundedWaitQueue<State, [Claim], Void>

    public init(queueTimeout: Duration, maxWaiting: Int = 1024) {
        precondition(maxWaiting >= 0, "maxWaiting must not be negative")
        self.queue = BoundedWaitQueue(
            state: State(), timeout: queueTimeout, maxWaiting: maxWaiting,
            timedOut: { Failure.busy }, full: { Failure.busy })
    }

    /// Holders of `key` now.
    public func inFlight(_ key: Key) -> Int { queue.withState { state, _ in state.inFlight[key, default: 0] } }

    /// Callers waiting now.
    public var waiting: Int { queue.waiting }

    /// Takes one slot of every claim, waiting for them if need be. Pair with `release`.
    public func acquire(_ claims: [Claim]) async throws {
        try await queue.wait(for: claims) { state in
            if state.closed { throw Failure.closed }
            guard state.fits(claims) else { return nil }
            state.take(claims)
            return ()
        }
    }

    /// Frees the slots `acquire` took, handing them to the earliest waiters that now fit.
    public func release(_ claims: [Claim]) {
        queue.withState { state, waiters in
            for claim in claims {
                let count = state.inFlight[claim.key, default: 1] - 1
                state.inFlight[claim.key] = count > 0 ? count : nil
            }
            var index = 0
            while index < waiters.count {
                if state.fits(waiters[index]) {
                    state.take(waiters[index])
                    waiters.grant(at: index, ())
                } else {
                    index += 1
                }
            }
        }
    }

    /// Fails every waiter and every later caller with `Failure.closed`.
    public func close() {
        queue.withState { state, waiters in
            state.closed = true
            waiters.failAll(Failure.closed)
        }
    }
}
