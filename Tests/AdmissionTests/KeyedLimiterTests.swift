import Admission
import TestPolling
import Testing

@Suite(.timeLimit(.minutes(10))) struct KeyedLimiterTests {
    typealias Limiter = KeyedLimiter<String>

    /// A user at its limit waits; another user of the same tenant, and another tenant, do not
    /// wait behind it; the tenant's own limit holds across its users.
    @Test func eachKeyIsBoundedAndABusyKeyHoldsUpNoOtherKey() async throws {
        // No waiter here may time out: the deadline is far beyond a loaded machine's pauses.
        let limiter = Limiter(queueTimeout: .seconds(600))
        let alice = [Limiter.Claim("user:alice", limit: 1), .init("tenant:a", limit: 2)]
        let bob = [Limiter.Claim("user:bob", limit: 1), .init("tenant:a", limit: 2)]
        let carol = [Limiter.Claim("user:carol", limit: 1), .init("tenant:a", limit: 2)]
        let dave = [Limiter.Claim("user:dave", limit: 1), .init("tenant:b", limit: 2)]
        try await limiter.acquire(alice)
        let second = Task { try await limiter.acquire(alice) }
        try #require(try await eventually { limiter.waiting == 1 })
        try await limiter.acquire(bob)  // not behind alice's waiter
        #expect(limiter.inFlight("tenant:a") == 2)
        let third = Task { try await limiter.acquire(carol) }  // tenant a is full
        try #require(try await eventually { limiter.waiting == 2 })
        try await limiter.acquire(dave)
        #expect(limiter.inFlight("tenant:b") == 1)

        limiter.release(bob)  // frees tenant a: carol fits, alice's second does not yet
        try await third.value
        #expect(limiter.waiting == 1)
        limiter.release(alice)
        try await second.value
        #expect(limiter.inFlight("user:alice") == 1)
        for claims in [alice, carol, dave] { limiter.release(claims) }
        #expect(limiter.inFlight("tenant:a") == 0 && limiter.inFlight("user:alice") == 0)
    }

    @Test func aWaiterPastTheTimeoutIsBusyAndACancelledOneLeaves() async throws {
        let limiter = Limiter(queueTimeout: .milliseconds(100))
        let claim = [Limiter.Claim("k", limit: 1)]
        try await limiter.acquire(claim)
        let started = ContinuousClock.now
        await #expect(throws: Limiter.Failure.busy) { try await limiter.acquire(claim) }
        #expect(ContinuousClock.now - started >= .milliseconds(100))

        let patient = Limiter(queueTimeout: .seconds(600))  // leaves by cancellation, not by its deadline
        try await patient.acquire(claim)
        let waiter = Task { try await patient.acquire(claim) }
        try #require(try await eventually { patient.waiting == 1 })
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        #expect(patient.waiting == 0)
        patient.release(claim)
        #expect(patient.inFlight("k") == 0)
    }

    @Test func fullQueueAndClosedLimiterFailAtOnce() async throws {
        let limiter = Limiter(queueTimeout: .seconds(600), maxWaiting: 1)
        let claim = [Limiter.Claim("k", limit: 1)]
        try await limiter.acquire(claim)
        let waiter = Task { try await limiter.acquire(claim) }
        try #require(try await eventually { limiter.waiting == 1 })
        await #expect(throws: Limiter.Failure.busy) { try await limiter.acquire(claim) }
        limiter.close()
        await #expect(throws: Limiter.Failure.closed) { try await waiter.value }
        await #expect(throws: Limiter.Failure.closed) { try await limiter.acquire([.init("other", limit: 1)]) }
    }
}
