import Admission
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
/// callers wait in a FIFO queue (a `KeyedLimiter` of one key). A caller that has
/// waited `queueTimeout`, or finds `maxWaiting` callers already queued, gets
/// `Error.busy`, which the HTTP layer turns into 503. A cancelled caller leaves
/// the queue at once.
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
    private let state = Mutex(Lifecycle.idle)
    private let admission: KeyedLimiter<Int>

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
        self.admission = KeyedLimiter(queueTimeout: queueTimeout, maxWaiting: maxWaiting)
    }

    /// Starts the threads. Calling it again while running has no effect; a
    /// pool that was shut down cannot be started again.
    public func start() {
        let shouldStart = state.withLock { lifecycle in
            switch lifecycle {
            case .idle:
                lifecycle = .running
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
        let wasStarted = state.withLock { lifecycle in
            defer { lifecycle = .stopped }
            return lifecycle == .running
        }
        admission.close()
        if wasStarted { try await threadPool.shutdownGracefully() }
    }

    /// Operations running now.
    public var inFlight: Int { admission.inFlight(0) }

    /// Callers waiting for a slot now.
    public var waiting: Int { admission.waiting }

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

    /// The one key of `admission`: every operation takes one of `maxConcurrent` slots.
    private var slot: KeyedLimiter<Int>.Claim { .init(0, limit: maxConcurrent) }

    private func acquire() async throws {
        guard state.withLock({ $0 }) == .running else { throw Error.notRunning }
        do {
            try await admission.acquire([slot])
        } catch KeyedLimiter<Int>.Failure.busy {
            throw Error.busy
        } catch KeyedLimiter<Int>.Failure.closed {
            throw Error.notRunning
        }
    }

    private func release() {
        admission.release([slot])
    }
}
