import NIOCore
import NIOPosix
import Synchronization

/// Runs blocking password hashing with bounded concurrency.
///
/// One scrypt derivation with the default parameters takes a core for up to
/// a second and 128 MiB of memory, so a flood of logins must not
/// start them all at once. The pool owns an `NIOThreadPool` of
/// `maxConcurrent` threads (scrypt never runs on an event loop or the Swift
/// cooperative pool) and admits at most `maxConcurrent` operations; further
/// callers wait in a FIFO queue. A caller that has waited `queueTimeout`, or
/// finds `maxWaiting` callers already queued, gets `Error.busy`, which the
/// HTTP layer turns into 503. A cancelled caller leaves the queue at once.
///
/// Call `start()` before use and `shutdown()` when the service stops.
public final class HashingPool: Sendable {
    /// Why an operation was not run.
    public enum Error: Swift.Error, Sendable, Equatable {
        /// The queue timeout passed, or the queue was full.
        case busy
        /// The pool was not started yet or has been shut down.
        case notRunning
    }

    /// Most operations that run at the same time (and threads in the pool).
    public let maxConcurrent: Int
    /// Longest a caller waits for a free slot before getting `Error.busy`.
    public let queueTimeout: Duration
    /// Most callers that wait at the same time; one more gets `Error.busy` at once.
    public let maxWaiting: Int

    private let threadPool: NIOThreadPool
    private let state: Mutex<State>

    /// Creates a stopped pool.
    ///
    /// - Parameters:
    ///   - maxConcurrent: operations (and threads); defaults to the number of
    ///     cores this process may use.
    ///   - queueTimeout: how long a caller may wait for a slot.
    ///   - maxWaiting: how many callers may wait at once.
    public init(
        maxConcurrent: Int = System.coreCount,
        queueTimeout: Duration = .seconds(5),
        maxWaiting: Int = 1024
    ) {
        precondition(maxConcurrent > 0, "maxConcurrent must be positive")
        precondition(maxWaiting >= 0, "maxWaiting must not be negative")
        self.maxConcurrent = maxConcurrent
        self.queueTimeout = queueTimeout
        self.maxWaiting = maxWaiting
        self.threadPool = NIOThreadPool(numberOfThreads: maxConcurrent)
        self.state = Mutex(State(available: maxConcurrent))
    }

    /// Starts the threads. Calling it again while running has no effect; a
    /// pool that was shut down cannot be started again.
    public func start() {
        let shouldStart = state.withLock { state in
            switch state.lifecycle {
            case .idle:
                state.lifecycle = .running
                return true
            case .running:
                return false
            case .stopped:
                preconditionFailure("HashingPool cannot be restarted after shutdown")
            }
        }
        if shouldStart { threadPool.start() }
    }

    /// Fails every waiting caller with `Error.notRunning`, lets running
    /// operations finish and stops the threads.
    public func shutdown() async throws {
        let (waiters, wasStarted) = state.withLock { state in
            let wasStarted = state.lifecycle == .running
            state.lifecycle = .stopped
            defer { state.waiters.removeAll() }
            return (state.waiters, wasStarted)
        }
        for waiter in waiters { waiter.continuation.resume(throwing: Error.notRunning) }
        if wasStarted { try await threadPool.shutdownGracefully() }
    }

    /// Operations running now.
    public var inFlight: Int { state.withLock { maxConcurrent - $0.available } }

    /// Callers waiting for a slot now.
    public var waiting: Int { state.withLock { $0.waiters.count } }

    /// `PasswordHasher.hash(password:parameters:)` on the pool.
    public func hash(password: String, parameters: ScryptParameters = .owaspDefault) async throws -> String {
        try await run { try PasswordHasher.hash(password: password, parameters: parameters) }
    }

    /// `PasswordHasher.verify(password:against:)` on the pool.
    public func verify(password: String, against encoded: String) async throws -> Bool {
        try await run { try PasswordHasher.verify(password: password, against: encoded) }
    }

    /// Runs blocking `body` on one of the pool's threads once a slot is free.
    ///
    /// Throws `Error.busy` or `Error.notRunning` without running `body`, and
    /// `CancellationError` if the calling task is cancelled while waiting.
    public func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await acquire()
        defer { release() }
        return try await threadPool.runIfActive(body)
    }

    // MARK: - Admission

    private enum Lifecycle {
        case idle, running, stopped
    }

    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Void, any Swift.Error>
    }

    private struct State {
        var lifecycle = Lifecycle.idle
        /// Free slots. A slot freed while callers wait is handed straight to
        /// the first of them instead, so it cannot be taken by a newcomer.
        var available: Int
        /// FIFO; removal by id is linear, which is fine at `maxWaiting` sizes.
        var waiters: [Waiter] = []
        var nextID: UInt64 = 0
    }

    private enum Admission {
        case granted
        case rejected(Error)
        case mustWait(id: UInt64)
    }

    private func acquire() async throws {
        let admission = state.withLock { state -> Admission in
            guard state.lifecycle == .running else { return .rejected(.notRunning) }
            if state.available > 0 {
                state.available -= 1
                return .granted
            }
            state.nextID += 1
            return .mustWait(id: state.nextID)
        }
        switch admission {
        case .granted:
            return
        case .rejected(let error):
            throw error
        case .mustWait(let id):
            try await wait(id: id, deadline: .now + queueTimeout)
        }
    }

    /// Waits in the queue until `release()` hands over a slot, the deadline
    /// passes, or the task is cancelled; whichever comes first removes the
    /// waiter under the lock, so exactly one of them resumes it.
    private func wait(id: UInt64, deadline: ContinuousClock.Instant) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                // Sleep only fails when cancelled, which means the waiter got
                // its slot or left through its own cancellation handler.
                guard (try? await Task.sleep(until: deadline, clock: .continuous)) != nil else { return }
                self.remove(id: id, resumingWith: Error.busy)
            }
            // The timer child is otherwise awaited until it fires.
            defer { group.cancelAll() }
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Swift.Error>) in
                    let outcome = enqueue(Waiter(id: id, continuation: continuation), deadline: deadline)
                    if let outcome { continuation.resume(with: outcome) }
                }
            } onCancel: {
                self.remove(id: id, resumingWith: CancellationError())
            }
        }
    }

    /// Queues `waiter`, or returns how it must be resumed instead.
    private func enqueue(_ waiter: Waiter, deadline: ContinuousClock.Instant) -> Result<Void, any Swift.Error>? {
        state.withLock { state in
            // Checked under the lock: cancellation sets the flag before running
            // the handler, and the handler takes this lock, so either we see
            // the flag here or the handler finds the queued waiter.
            if Task.isCancelled { return .failure(CancellationError()) }
            guard state.lifecycle == .running else { return .failure(Error.notRunning) }
            if state.available > 0 {
                state.available -= 1
                return .success(())
            }
            // Same reasoning for the timer: it only fires at or after the
            // deadline, so if it already looked for this waiter, this is true.
            if ContinuousClock.now >= deadline || state.waiters.count >= maxWaiting {
                return .failure(Error.busy)
            }
            state.waiters.append(waiter)
            return nil
        }
    }

    private func remove(id: UInt64, resumingWith error: any Swift.Error) {
        let removed = state.withLock { state -> Waiter? in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return state.waiters.remove(at: index)
        }
        removed?.continuation.resume(throwing: error)
    }

    private func release() {
        let next = state.withLock { state -> Waiter? in
            if state.waiters.isEmpty {
                state.available += 1
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.continuation.resume()
    }
}
