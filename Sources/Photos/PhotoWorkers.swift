import NIOPosix
import Synchronization

/// The threads that wait for sandboxed workers: as many as photos may be processed at once.
/// More uploads than threads wait here for their turn (the fair shares decide who gets in
/// front of it), so the decoders never take more cores than this.
public final class PhotoWorkers: Sendable {
    private let pool: NIOThreadPool
    public let count: Int
    private let running = Atomic(0)

    private let used = Mutex(Duration.zero)

    /// Jobs running or waiting for a thread.
    public var inFlight: Int { running.load(ordering: .relaxed) }

    /// The CPU (user and system) every worker process used together since this started.
    public var cpu: Duration { used.withLock { $0 } }

    func record(cpu: Duration) {
        used.withLock { $0 += cpu }
    }

    public init(count: Int) {
        self.count = max(1, count)
        pool = NIOThreadPool(numberOfThreads: self.count)
        pool.start()
    }

    func run<T: Sendable>(_ body: @Sendable @escaping () -> T) async throws -> T {
        running.add(1, ordering: .relaxed)
        defer { running.subtract(1, ordering: .relaxed) }
        return try await pool.runIfActive(body)
    }

    public func shutdown() async throws {
        try await pool.shutdownGracefully()
    }
}
