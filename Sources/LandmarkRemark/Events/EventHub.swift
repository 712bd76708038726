import Logging
import Postgres
import ServiceLifecycle
import Synchronization

/// The process's view of the event log, fanned out to every open event stream.
///
/// One task polls the log every `pollInterval` and keeps the horizon: how far events are
/// final. On one server that is one horizon for the whole log (`EventHorizon`): a probe of
/// one index returns the ids written since, every tenant's. Where Citus holds the log it
/// is one head per tenant with open streams (`TenantHorizon`), each probed on the tenant's
/// worker, since one node's snapshot says nothing about another's ids (migration 0018).
/// When a tenant's head moves its streams are woken, once however many events arrived
/// (wake-ups coalesce); each then reads its own slice of the log up to its tenant's head.
/// Writers notify no one: `pg_notify` would serialise their commits.
final class EventHub: Service, Sendable {
    enum Signal: Sendable { case wake, tick }

    /// Which horizon the log needs (`event_log_mode`), learnt at the first poll.
    enum Mode: Sendable { case global, perTenant }

    /// Where a tenant's streams may read up to.
    struct Head: Sendable, Equatable {
        /// Every event id of the tenant at or below is final.
        let id: Int64
        /// Changes when the tenant's ids start coming from another node's range (its shard
        /// moved): a stream of an older generation is reset to `id`. Always 0 on one server.
        let generation: UInt64
        /// Per tenant: the first id of the range the tenant's ids come from; nil for the
        /// one horizon of a single server.
        let floor: Int64?
    }

    struct Subscription: Sendable {
        let id: UInt64
        let signals: AsyncStream<Signal>
    }

    struct Subscriber {
        let tenantID: Int64
        let userID: Int64
        let continuation: AsyncStream<Signal>.Continuation
    }

    /// A tenant's head where Citus holds the log, kept while the tenant has streams here.
    struct TenantState {
        var horizon = TenantHorizon()
        var generation: UInt64
    }

    struct State {
        var subscribers: [UInt64: Subscriber] = [:]
        var nextID: UInt64 = 0
        var closed = false
        var mode: Mode?
        /// The one horizon (`.global`).
        var horizon: EventHorizon?
        /// The heads of the tenants with streams (`.perTenant`).
        var tenants: [Int64: TenantState] = [:]
        var nextGeneration: UInt64 = 1
        /// Completed polls of the log, for metrics (and tests that wait for one).
        var polls = 0
        var readyWaiters: [ReadyWaiter] = []

        /// The tenant's head if it may be handed out: nil while the service is starting, or
        /// while the tenant's head is not yet known (a new tenant, or one whose shard moved).
        func head(of tenantID: Int64) -> Head? {
            switch mode {
            case nil: return nil
            case .global:
                guard let horizon, horizon.isReady else { return nil }
                return Head(id: horizon.head, generation: 0, floor: nil)
            case .perTenant:
                guard let tenant = tenants[tenantID], let id = tenant.horizon.head, let floor = tenant.horizon.floor else { return nil }
                return Head(id: id, generation: tenant.generation, floor: floor)
            }
        }
    }

    struct ReadyWaiter {
        let tenantID: Int64
        let deadline: ContinuousClock.Instant
        let continuation: CheckedContinuation<Head, any Error>
    }

    /// How long a new stream waits for its tenant's head before `503`.
    let readyTimeout: Duration

    /// Ids read per probe of the one horizon; a log further ahead is read again at once.
    static let probeSize = 10_000

    let pool: PostgresPool
    private let perUser: Int
    private let perProcess: Int
    private let heartbeat: Duration
    private let pollInterval: Duration
    let logger: Logger
    let state = Mutex(State())

    init(
        pool: PostgresPool, perUser: Int, perProcess: Int, heartbeat: Duration, pollInterval: Duration,
        readyTimeout: Duration, logger: Logger
    ) {
        self.pool = pool
        self.readyTimeout = readyTimeout
        self.perUser = perUser
        self.perProcess = perProcess
        self.heartbeat = heartbeat
        self.pollInterval = pollInterval
        self.logger = logger
    }

    var openStreams: Int { state.withLock { $0.subscribers.count } }
    var polls: Int { state.withLock { $0.polls } }

    /// For `lr_event_log_horizon`: the one horizon on a single server. Per tenant there is
    /// no one number (heads of different workers count different ranges), so 0 there;
    /// `lr_event_log_polls` still shows the log being read.
    var horizonGauge: Int64 { state.withLock { $0.mode == .global ? $0.horizon?.head ?? 0 : 0 } }

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

    /// The tenant's head, once it may be handed out: every event id of the tenant at or
    /// below it is final. Waits while it is not yet known (a starting service, or per tenant
    /// a tenant that had no stream here: a poll or two, normally), and `503` if that takes
    /// longer than `readyTimeout` (the database is unreachable, or per tenant a transaction
    /// on the tenant's worker stays open that long). Call after `subscribe`: the tenant's
    /// head is kept only while it has streams.
    func head(tenantID: Int64) async throws -> Head {
        let deadline = ContinuousClock.now + readyTimeout
        return try await withCheckedThrowingContinuation { continuation in
            let ready = state.withLock { state -> Result<Head, any Error>? in
                if state.closed { return .failure(EventError.unavailable) }
                if let head = state.head(of: tenantID) { return .success(head) }
                state.readyWaiters.append(ReadyWaiter(tenantID: tenantID, deadline: deadline, continuation: continuation))
                return nil
            }
            if let ready { continuation.resume(with: ready) }
        }
    }

    /// The tenant's head as last read, for a stream that already started; nil while its
    /// tenant's head is not known (per tenant, just after its shard moved).
    func currentHead(tenantID: Int64) -> Head? { state.withLock { $0.head(of: tenantID) } }

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
