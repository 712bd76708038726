import NIOPosix

/// The threads that wait for sandboxed workers: as many as photos may be processed at once.
/// More uploads than threads wait here for their turn (the fair shares decide who gets in
/// front of it), so the decoders never take more cores than this.
public final class PhotoWorkers: Sendable {
    private let pool: NIOThreadPool
    public let count: Int

    public init(count: Int) {
        self.count = max(1, count)
        pool = NIOThreadPool(numberOfThreads: self.count)
        pool.start()
    }

    func run<T: Sendable>(_ body: @Sendable @escaping () -> T) async throws -> T {
        try await pool.runIfActive(body)
    }

    public func shutdown() async throws {
        try await pool.shutdownGracefully()
    }
}
