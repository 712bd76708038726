import Synchronization

/// Callers waiting for something a piece of state hands out (a connection, a slot): FIFO
/// waiters, a deadline each, at most `maxWaiting` of them, cancellation-aware.
///
/// The state and the waiters sit behind one lock, so "may this caller go now, or wait?" and
/// "who goes next, now that this came back?" are decided together, and no hand-off is lost
/// between them. The owner says what a grant is: `wait(for:_:)` asks its `attempt` first
/// (under the lock, before queueing, and again just before queueing), and `withState(_:)`
/// lets the owner change the state and grant waiters in order (`Waiters.grantFirst`, or
/// `grant(at:)` for the earliest one that fits). Continuations are resumed after the lock
/// is released.
///
/// - A waiter past its deadline (`timeout` after it began to wait) fails with `timedOut()`.
///   One task fails expired waiters for all of them: it sleeps until the earliest deadline
///   and ends when no one waits. (A timer task per waiter cost a task and a timer for every
///   caller that had to wait, most of them served in milliseconds;
///   bench/results/2026-11-23-full.md.)
/// - A caller arriving when `maxWaiting` already wait fails at once with `full()`.
/// - A cancelled waiter leaves the queue at once with `CancellationError`; a task cancelled
///   before it would queue fails the same way without queueing.
///
/// `PostgresPool` (connections) and `KeyedLimiter` (slots per key, and through it
/// `HashingPool`) use it.
public final class BoundedWaitQueue<State: Sendable, Request: Sendable, Grant: Sendable>: Sendable {
    /// The callers waiting now, oldest first, as the owner sees them inside `withState`.
    public struct Waiters: Sendable {
        struct Entry: Sendable {
            let id: UInt64
            let request: Request
            let deadline: ContinuousClock.Instant
            let continuation: CheckedContinuation<Grant, any Error>
        }

        var entries: [Entry] = []
        /// Decided under the lock, resumed after it.
        var resumptions: [(CheckedContinuation<Grant, any Error>, Result<Grant, any Error>)] = []

        public var count: Int { entries.count }
        public var isEmpty: Bool { entries.isEmpty }

        /// The request of the waiter at `position` (0 is the oldest).
        public subscript(position: Int) -> Request { entries[position].request }

        /// Removes the oldest waiter; it returns `grant`.
        public mutating func grantFirst(_ grant: Grant) {
            self.grant(at: 0, grant)
        }

        /// Removes the waiter at `position`; it returns `grant`.
        public mutating func grant(at position: Int, _ grant: Grant) {
            let entry = entries.remove(at: position)
            resumptions.append((entry.continuation, .success(grant)))
        }

        /// Removes every waiter; each throws `error`.
        public mutating func failAll(_ error: any Error) {
            for entry in entries { resumptions.append((entry.continuation, .failure(error))) }
            entries = []
        }
    }

    private struct Storage: Sendable {
        var state: State
        var waiters = Waiters()
        /// Whether the one task that fails waiters past their deadline is running.
        var reaping = false
    }

    public let timeout: Duration
    public let maxWaiting: Int
    private let timedOut: @Sendable () -> any Error
    private let full: @Sendable () -> any Error
    private let storage: Mutex<Storage>
    private let nextID = Atomic<UInt64>(0)

    /// - Parameters:
    ///   - state: what the owner hands out from, guarded by the queue's lock.
    ///   - timeout: how long a caller may wait.
    ///   - maxWaiting: how many callers may wait at once.
    ///   - timedOut: the error of a waiter past its deadline.
    ///   - full: the error of a caller that finds the queue full.
    public init(
        state: State, timeout: Duration, maxWaiting: Int = .max,
        timedOut: @escaping @Sendable () -> any Error, full: @escaping @Sendable () -> any Error
    ) {
        precondition(maxWaiting >= 0, "maxWaiting must not be negative")
        self.storage = Mutex(Storage(state: state))
        self.timeout = timeout
        self.maxWaiting = maxWaiting
        self.timedOut = timedOut
        self.full = full
    }

    /// Callers waiting now.
    public var waiting: Int { storage.withLock { $0.waiters.count } }

    /// Runs `body` on the state and the waiters under the lock; waiters it grants or fails
    /// are resumed once the lock is released.
    public func withState<T: Sendable>(_ body: (inout State, inout Waiters) -> T) -> T {
        let (result, resumptions) = storage.withLock { storage in
            let result = body(&storage.state, &storage.waiters)
            defer { storage.waiters.resumptions = [] }
            return (result, storage.waiters.resumptions)
        }
        for (continuation, outcome) in resumptions { continuation.resume(with: outcome) }
        return result
    }

    /// Returns what `attempt` grants now, or waits in line with `request` until the owner
    /// grants it one (`withState`), its deadline passes, or its task is cancelled.
    /// `attempt` runs under the lock; it may throw (a closed pool) to refuse at once.
    public func wait(for request: Request, _ attempt: (inout State) throws -> Grant?) async throws -> Grant {
        if let grant = try storage.withLock({ try attempt(&$0.state) }) { return grant }
        let id = nextID.wrappingAdd(1, ordering: .relaxed).newValue
        let deadline = ContinuousClock.now + timeout
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Grant, any Error>) in
                let (outcome, startReaper) = storage.withLock { storage -> (Result<Grant, any Error>?, Bool) in
                    // Checked under the lock: cancellation sets the flag before running the
                    // handler, which takes this lock, so one of the two sees the other.
                    if Task.isCancelled { return (.failure(CancellationError()), false) }
                    do {
                        if let grant = try attempt(&storage.state) { return (.success(grant), false) }
                    } catch {
                        return (.failure(error), false)
                    }
                    if storage.waiters.count >= maxWaiting { return (.failure(full()), false) }
                    storage.waiters.entries.append(.init(id: id, request: request, deadline: deadline, continuation: continuation))
                    defer { storage.reaping = true }
                    return (nil, !storage.reaping)
                }
                if startReaper { startReaping() }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            fail(id, with: CancellationError())
        }
    }

    private func fail(_ id: UInt64, with error: any Error) {
        let entry = storage.withLock { storage -> Waiters.Entry? in
            guard let index = storage.waiters.entries.firstIndex(where: { $0.id == id }) else { return nil }
            return storage.waiters.entries.remove(at: index)
        }
        entry?.continuation.resume(throwing: error)
    }

    private func startReaping() {
        Task { [weak self] in
            while let next = self?.failExpiredWaiters() {
                try? await Task.sleep(until: next, clock: .continuous)
            }
        }
    }

    /// Fails the waiters past their deadline; the next deadline, or nil (and reaping stops)
    /// when no one waits.
    private func failExpiredWaiters() -> ContinuousClock.Instant? {
        let now = ContinuousClock.now
        let (expired, next) = storage.withLock { storage -> ([Waiters.Entry], ContinuousClock.Instant?) in
            let expired = storage.waiters.entries.filter { $0.deadline <= now }
            if !expired.isEmpty { storage.waiters.entries.removeAll { $0.deadline <= now } }
            let next = storage.waiters.entries.lazy.map(\.deadline).min()
            if next == nil { storage.reaping = false }
            return (expired, next)
        }
        for entry in expired { entry.continuation.resume(throwing: timedOut()) }
        return next
    }
}
