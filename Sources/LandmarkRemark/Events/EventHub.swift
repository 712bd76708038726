import Logging
import Postgres
import ServiceLifecycle
import Synchronization

/// The process's view of the event log, fanned out to every open event stream.
///
/// One task polls the log's horizon (`EventHorizon`) every `pollInterval`: a probe of
/// one index that returns the ids written since, every tenant's. When the horizon
/// moves, the streams of the tenants that got events are woken, once however many
/// events arrived (wake-ups coalesce); each then reads its own slice of the log up to
/// the horizon. Writers notify no one: `pg_notify` would serialise their commits.
final class EventHub: Service, Sendable {
    enum Signal: Sendable { case wake, tick }

    struct Subscription: Sendable {
        let id: UInt64
        let signals: AsyncStream<Signal>
    }

    private struct Subscriber {
        let tenantID: Int64
        let userID: Int64
        let continuation: AsyncStream<Signal>.Continuation
    }

    private struct State {
        var subscribers: [UInt64: Subscriber] = [:]
        var nextID: UInt64 = 0
        var closed = false
        var horizon: EventHorizon?
        /// Completed reads of the horizon, for metrics (and tests that wait for one).
        var polls = 0
        var readyWaiters: [ReadyWaiter] = []
    }

    private struct ReadyWaiter {
        let deadline: ContinuousClock.Instant
        let continuation: CheckedContinuation<Int64, any Error>
    }

    /// How long a new stream waits for a starting service's horizon before `503`.
    static let readyTimeout: Duration = .seconds(5)

    /// Ids read per probe; a log further ahead is read again at once.
    static let probeSize = 10_000

    private let pool: PostgresPool
    private let perUser: Int
    private let perProcess: Int
    private let heartbeat: Duration
    private let pollInterval: Duration
    private let logger: Logger
    private let state = Mutex(State())

    init(pool: PostgresPool, perUser: Int, perProcess: Int, heartbeat: Duration, pollInterval: Duration, logger: Logger) {
        self.pool = pool
        self.perUser = perUser
        self.perProcess = perProcess
        self.heartbeat = heartbeat
        self.pollInterval = pollInterval
        self.logger = logger
    }

    var openStreams: Int { state.withLock { $0.subscribers.count } }
    var polls: Int { state.withLock { $0.polls } }

    /// Registers a stream, or throws `EventError.tooManyStreams` past the per-user or per-process limit.
    func subscribe(tenantID: Int64, userID: Int64) throws -> Subscription {
        // Wake-ups coalesce: one pending signal is enough to make a stream read everything new.
        let (signals, continuation) = AsyncStream.makeStream(of: Signal.self, bufferingPolicy: .bufferingNewest(1))
        let id = try state.withLock { state -> UInt64 in
            if state.closed { throw EventError.unavailable }
            let mine = state.subscribers.values.filter { $0.tenantID == tenantID && $0.userID == userID }.count
            guard mine < perUser, state.subscribers.count < perProcess else { throw EventError.tooManyStreams }
            state.nextID += 1
            state.subscribers[state.nextID] = Subscriber(tenantID: tenantID, userID: userID, continuation: continuation)
            return state.nextID
        }
        return Subscription(id: id, signals: signals)
    }

    /// Frees the slot; safe to call more than once (the stream's end and its connection's close both do).
    func unsubscribe(_ id: UInt64) {
        let subscriber = state.withLock { $0.subscribers.removeValue(forKey: id) }
        subscriber?.continuation.finish()
    }

    /// The horizon: every event id at or below it is final. Waits while the service is
    /// starting and transactions older than it may still commit (milliseconds, normally),
    /// and `503` if that takes longer than `readyTimeout` (the database is unreachable).
    func head() async throws -> Int64 {
        let deadline = ContinuousClock.now + Self.readyTimeout
        return try await withCheckedThrowingContinuation { continuation in
            let ready = state.withLock { state -> Result<Int64, any Error>? in
                if state.closed { return .failure(EventError.unavailable) }
                if let horizon = state.horizon, horizon.isReady { return .success(horizon.head) }
                state.readyWaiters.append(ReadyWaiter(deadline: deadline, continuation: continuation))
                return nil
            }
            if let ready { continuation.resume(with: ready) }
        }
    }

    /// The horizon as last read, for a stream that already started (so it is ready).
    var currentHead: Int64 { state.withLock { $0.horizon?.head ?? 0 } }

    /// Polls and ticks until graceful shutdown, then ends every stream.
    func run() async throws {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.poll() }
            group.addTask { await self.tick() }
            try? await gracefulShutdown()
            group.cancelAll()
        }
        let (subscribers, waiters) = state.withLock { state -> ([Subscriber], [ReadyWaiter]) in
            state.closed = true
            defer { state.subscribers = [:]; state.readyWaiters = [] }
            return (Array(state.subscribers.values), state.readyWaiters)
        }
        for subscriber in subscribers { subscriber.continuation.finish() }
        for waiter in waiters { waiter.continuation.resume(throwing: EventError.unavailable) }
    }

    private func poll() async {
        while !Task.isCancelled {
            do {
                try await advance()
            } catch {
                logger.warning("reading the event log's horizon failed", metadata: ["error": "\(error)"])
            }
            let now = ContinuousClock.now
            let expired = state.withLock { state -> [ReadyWaiter] in
                defer { state.readyWaiters.removeAll { $0.deadline <= now } }
                return state.readyWaiters.filter { $0.deadline <= now }
            }
            for waiter in expired { waiter.continuation.resume(throwing: EventError.unavailable) }
            try? await Task.sleep(for: pollInterval)
        }
    }

    /// Moves the horizon as far as the log allows and wakes the tenants' streams.
    func advance() async throws {
        guard var horizon = state.withLock({ $0.horizon }) else {
            let (head, xmax) = try await EventLog.start(on: pool)
            state.withLock { $0.horizon = EventHorizon(head: head, snapshotXmax: xmax) }
            return try await advance()
        }
        var woken: Set<Int64> = []
        while true {
            let (xmin, xmax, ids, tenants) = try await EventLog.ids(after: horizon.head, limit: Self.probeSize, on: pool)
            let moved = horizon.advance(.init(snapshotXmin: xmin, snapshotXmax: xmax, ids: ids, tenantIDs: tenants))
            woken.formUnion(moved.tenants)
            if moved.stoppedAtGap || ids.count < Self.probeSize { break }
        }
        let (subscribers, waiters) = state.withLock { state -> ([Subscriber], [ReadyWaiter]) in
            state.horizon = horizon
            state.polls += 1
            guard horizon.isReady else { return ([], []) }
            defer { state.readyWaiters = [] }
            return (state.subscribers.values.filter { woken.contains($0.tenantID) }, state.readyWaiters)
        }
        for waiter in waiters { waiter.continuation.resume(returning: horizon.head) }
        for subscriber in subscribers { subscriber.continuation.yield(.wake) }
    }

    /// Keep-alive ticks; streams also use them to check that their token still admits them.
    /// (Purging old events is `RetentionService`'s.)
    private func tick() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: heartbeat)
            if Task.isCancelled { return }
            let subscribers = state.withLock { Array($0.subscribers.values) }
            for subscriber in subscribers { subscriber.continuation.yield(.tick) }
        }
    }
}
