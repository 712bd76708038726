import Admission
import Synchronization
import TestPolling
import Testing

@Suite(.timeLimit(.minutes(10))) struct BoundedWaitQueueTests {
    struct TimedOut: Error, Equatable {}
    struct Full: Error, Equatable {}
    struct Closed: Error, Equatable {}

    /// Permits to hand out, and whether the owner closed.
    struct Permits: Sendable {
        var free: Int
        var closed = false
    }

    typealias Queue = BoundedWaitQueue<Permits, Int, Int>

    /// What waiters were granted, in the order they returned.
    final class Log: Sendable {
        let entries = Mutex<[Int]>([])
        func append(_ value: Int) { entries.withLock { $0.append(value) } }
        var all: [Int] { entries.withLock { $0 } }
    }

    /// Waiters' deadline far beyond a loaded machine's pauses, unless a test is about deadlines.
    func makeQueue(permits: Int, timeout: Duration = .seconds(600), maxWaiting: Int = .max) -> Queue {
        Queue(state: Permits(free: permits), timeout: timeout, maxWaiting: maxWaiting, timedOut: { TimedOut() }, full: { Full() })
    }

    /// Takes a permit if there is one; the grant echoes the request.
    func take(_ queue: Queue, _ request: Int) async throws -> Int {
        try await queue.wait(for: request) { permits in
            if permits.closed { throw Closed() }
            guard permits.free > 0 else { return nil }
            permits.free -= 1
            return request
        }
    }

    /// Waiters are served in arrival order, each with what the owner granted it, and the
    /// owner sees their requests in that order.
    @Test func waitersAreServedFirstInFirstOut() async throws {
        let queue = makeQueue(permits: 1)
        #expect(try await take(queue, 0) == 0)  // no wait: a permit was free
        let served = Log()
        var tasks: [Task<Void, any Error>] = []
        for request in 1...5 {
            tasks.append(Task {
                let grant = try await take(queue, request)
                served.append(grant)
            })
            try #require(try await eventually { queue.waiting == request })  // queued in this order
        }
        #expect(queue.withState { _, waiters in (0..<waiters.count).map { waiters[$0] } } == [1, 2, 3, 4, 5])
        for expected in 1...5 {
            queue.withState { _, waiters in waiters.grantFirst(waiters[0] * 10) }
            try #require(try await eventually { served.all.count == expected })
        }
        for task in tasks { try await task.value }
        #expect(served.all == [10, 20, 30, 40, 50])
        #expect(queue.waiting == 0)
    }

    /// A waiter past its deadline fails with the owner's error, not before; later waiters
    /// keep their own deadlines; the timer ends once no one waits, and starts again.
    @Test func aWaiterPastItsDeadlineFailsWithTimedOut() async throws {
        // Generous times: a loaded 2-core machine may take long to start a task.
        let queue = makeQueue(permits: 0, timeout: .seconds(2))
        for _ in 0..<2 {
            let earlyStart = ContinuousClock.now
            let early = Task { try await take(queue, 1) }
            try #require(try await eventually { queue.waiting == 1 })
            try await Task.sleep(for: .milliseconds(500))
            let lateStart = ContinuousClock.now
            let late = Task { try await take(queue, 2) }
            try #require(try await eventually { queue.waiting == 2 || ContinuousClock.now - earlyStart > .seconds(2) })
            await #expect(throws: TimedOut()) { try await early.value }
            #expect(ContinuousClock.now - earlyStart >= .seconds(2))
            await #expect(throws: TimedOut()) { try await late.value }
            #expect(ContinuousClock.now - lateStart >= .seconds(2))
            #expect(queue.waiting == 0)
        }
    }

    /// A cancelled waiter leaves at once, and the next grant goes to the one behind it; a
    /// task cancelled before it would wait never queues.
    @Test func aCancelledWaiterLeavesAtOnce() async throws {
        let queue = makeQueue(permits: 0)
        let cancelled = Task { try await take(queue, 1) }
        try #require(try await eventually { queue.waiting == 1 })
        let behind = Task { try await take(queue, 2) }
        try #require(try await eventually { queue.waiting == 2 })
        let started = ContinuousClock.now
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        // At once, not at its deadline: a waiter left at its deadline fails with TimedOut, and
        // long before the 600 s deadline whatever the machine's load.
        #expect(ContinuousClock.now - started < .seconds(60))
        #expect(queue.waiting == 1)
        queue.withState { _, waiters in waiters.grantFirst(7) }
        #expect(try await behind.value == 7)

        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await take(queue, 3)
        }
        await #expect(throws: CancellationError.self) { try await early.value }
        #expect(queue.waiting == 0)
    }

    /// `attempt` refuses at once (a closed owner), a full queue refuses at once, and
    /// `failAll` fails every waiter.
    @Test func refusalsFullQueueAndFailAll() async throws {
        let queue = makeQueue(permits: 0, maxWaiting: 1)
        let waiter = Task { try await take(queue, 1) }
        try #require(try await eventually { queue.waiting == 1 })
        await #expect(throws: Full()) { try await take(queue, 2) }
        queue.withState { permits, waiters in
            permits.closed = true
            waiters.failAll(Closed())
        }
        await #expect(throws: Closed()) { try await waiter.value }
        await #expect(throws: Closed()) { try await take(queue, 3) }
        #expect(queue.waiting == 0)
    }
}
