import Credentials
import Synchronization
import TestPolling
import Testing

#if canImport(Glibc)
import Glibc  // usleep
#elseif canImport(Darwin)
import Darwin
#endif

/// Counts operations running at the same moment and remembers the peak.
final class InFlightCounter: Sendable {
    private let counts = Mutex((current: 0, peak: 0))

    func enter() {
        counts.withLock {
            $0.current += 1
            $0.peak = max($0.peak, $0.current)
        }
    }

    func leave() { counts.withLock { $0.current -= 1 } }

    var peak: Int { counts.withLock { $0.peak } }
}

/// Holds pool threads until opened, so tests can saturate a pool on purpose.
final class Gate: Sendable {
    private let isOpen = Atomic(false)

    func open() { isOpen.store(true, ordering: .releasing) }

    var opened: Bool { isOpen.load(ordering: .acquiring) }

    /// Blocks the calling (pool) thread; never called on the cooperative pool.
    func waitBlocking() {
        while !isOpen.load(ordering: .acquiring) { usleep(1000) }
    }
}

/// Records the order in which pool operations ran.
final class Recorder: Sendable {
    private let values = Mutex<[Int]>([])

    func append(_ value: Int) { values.withLock { $0.append(value) } }

    var recorded: [Int] { values.withLock { $0 } }
}

@Suite(.timeLimit(.minutes(10))) struct HashingPoolTests {
    @Test func boundsConcurrentVerifications() async throws {
        let pool = HashingPool(maxConcurrent: 2, queueTimeout: .seconds(60))
        pool.start()
        let encoded = try PasswordHasher.hash(password: "secret", parameters: testParameters)
        let counter = InFlightCounter()

        // Counted verifications: the counter sees every operation on the
        // pool's threads, so its peak is the real concurrency.
        let counted = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<16 {
                group.addTask {
                    try await pool.run {
                        counter.enter()
                        defer { counter.leave() }
                        let matched = try PasswordHasher.verify(
                            password: index.isMultiple(of: 2) ? "secret" : "wrong", against: encoded)
                        usleep(10_000)  // make overlaps certain so the peak is observable
                        return matched == index.isMultiple(of: 2)
                    }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(counted.count == 16 && counted.allSatisfy { $0 })
        #expect(counter.peak == 2)

        // The same through the pool's own API, many at once.
        let verified = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<16 {
                group.addTask { try await pool.verify(password: "secret", against: encoded) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(verified.count == 16 && verified.allSatisfy { $0 })
        #expect(pool.inFlight == 0 && pool.waiting == 0)
        try await pool.shutdown()
    }

    @Test func hashesOnThePool() async throws {
        let pool = HashingPool(maxConcurrent: 2)
        pool.start()
        let encoded = try await pool.hash(password: "on the pool", parameters: testParameters)
        #expect(try await pool.verify(password: "on the pool", against: encoded))
        #expect(try await !pool.verify(password: "off the pool", against: encoded))
        await #expect(throws: PasswordHashError.self) { try await pool.verify(password: "x", against: "junk") }
        try await pool.shutdown()
    }

    @Test func busyAfterQueueTimeout() async throws {
        let pool = HashingPool(maxConcurrent: 1, queueTimeout: .milliseconds(100))
        pool.start()
        let gate = Gate()
        let blocker = Task { try await pool.run { gate.waitBlocking() } }
        try #require(try await eventually { pool.inFlight == 1 })

        let start = ContinuousClock.now
        await #expect(throws: HashingPool.Error.busy) { try await pool.run { () } }
        #expect(ContinuousClock.now - start >= .milliseconds(100))
        #expect(pool.waiting == 0)

        gate.open()
        try await blocker.value
        #expect(try await pool.run { 42 } == 42)  // the slot came back
        try await pool.shutdown()
    }

    @Test func busyAtOnceWhenQueueIsFull() async throws {
        let pool = HashingPool(maxConcurrent: 1, queueTimeout: .seconds(60), maxWaiting: 1)
        pool.start()
        let gate = Gate()
        let blocker = Task { try await pool.run { gate.waitBlocking() } }
        try #require(try await eventually { pool.inFlight == 1 })
        let queued = Task { try await pool.run { 1 } }
        try #require(try await eventually { pool.waiting == 1 })

        await #expect(throws: HashingPool.Error.busy) { try await pool.run { 2 } }

        gate.open()
        try await blocker.value
        #expect(try await queued.value == 1)
        try await pool.shutdown()
    }

    @Test func waitersRunInArrivalOrder() async throws {
        let pool = HashingPool(maxConcurrent: 1, queueTimeout: .seconds(60))
        pool.start()
        let gate = Gate()
        let order = Recorder()
        let blocker = Task { try await pool.run { gate.waitBlocking() } }
        try #require(try await eventually { pool.inFlight == 1 })

        var waiters: [Task<Void, any Error>] = []
        for index in 0..<5 {
            waiters.append(Task { try await pool.run { order.append(index) } })
            try #require(try await eventually { pool.waiting == index + 1 })
        }
        gate.open()
        try await blocker.value
        for waiter in waiters { try await waiter.value }
        #expect(order.recorded == [0, 1, 2, 3, 4])
        try await pool.shutdown()
    }

    @Test func cancelledWaiterLeavesTheQueue() async throws {
        let pool = HashingPool(maxConcurrent: 1, queueTimeout: .seconds(60))
        pool.start()
        let gate = Gate()
        let ran = Gate()
        let blocker = Task { try await pool.run { gate.waitBlocking() } }
        try #require(try await eventually { pool.inFlight == 1 })

        let waiter = Task { try await pool.run { ran.open() } }
        try #require(try await eventually { pool.waiting == 1 })
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        #expect(pool.waiting == 0)

        // A task cancelled before it asks never queues.
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await pool.run { 1 }
        }
        await #expect(throws: CancellationError.self) { try await early.value }
        #expect(pool.waiting == 0)

        gate.open()
        try await blocker.value
        #expect(!ran.opened)
        #expect(try await pool.run { 7 } == 7)
        #expect(pool.inFlight == 0)
        try await pool.shutdown()
    }

    @Test func notRunningBeforeStartAndAfterShutdown() async throws {
        let pool = HashingPool(maxConcurrent: 1, queueTimeout: .seconds(60))
        await #expect(throws: HashingPool.Error.notRunning) { try await pool.run { () } }
        pool.start()
        pool.start()  // idempotent

        let gate = Gate()
        let running = Gate()
        let blocker = Task { try await pool.run { running.open(); gate.waitBlocking() } }
        // Running on a pool thread, not only admitted (`inFlight`): a shutdown between the two
        // would stop the threads before the operation reached them (a loaded machine did).
        try #require(try await eventually { running.opened })
        let queued = Task { try await pool.run { () } }
        try #require(try await eventually { pool.waiting == 1 })

        // Shut down while the slot is still taken: the waiter is failed at
        // once, and shutdown then waits for the running operation.
        let shutdown = Task { try await pool.shutdown() }
        await #expect(throws: HashingPool.Error.notRunning) { try await queued.value }
        gate.open()
        try await shutdown.value
        try await blocker.value
        await #expect(throws: HashingPool.Error.notRunning) { try await pool.run { () } }
    }
}
