import Logging
import Postgres
import ServiceLifecycle
import Synchronization

/// One `LISTEN` connection per process, fanned out to every open event stream.
///
/// Notifications only wake streams; each stream then reads what it has not
/// seen from the event log, by id. So a burst, a slow stream or a notification
/// lost while the listener reconnects costs nothing but a later read: on every
/// (re)connect all streams are woken to catch up.
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
    }

    static let channel = "lr_events"

    private let conninfo: String
    private let pool: PostgresPool
    private let perUser: Int
    private let perProcess: Int
    private let heartbeat: Duration
    private let logger: Logger
    private let state = Mutex(State())

    init(conninfo: String, pool: PostgresPool, perUser: Int, perProcess: Int, heartbeat: Duration, logger: Logger) {
        self.conninfo = conninfo
        self.pool = pool
        self.perUser = perUser
        self.perProcess = perProcess
        self.heartbeat = heartbeat
        self.logger = logger
    }

    var openStreams: Int { state.withLock { $0.subscribers.count } }

    /// Registers a stream, or throws `429` past the per-user or per-process limit.
    func subscribe(tenantID: Int64, userID: Int64) throws -> Subscription {
        // Wake-ups coalesce: one pending signal is enough to make a stream read everything new.
        let (signals, continuation) = AsyncStream.makeStream(of: Signal.self, bufferingPolicy: .bufferingNewest(1))
        let id = try state.withLock { state -> UInt64 in
            if state.closed { throw AppError.unavailable() }
            let mine = state.subscribers.values.filter { $0.tenantID == tenantID && $0.userID == userID }.count
            guard mine < perUser, state.subscribers.count < perProcess else { throw AppError.rateLimited(retryAfter: 5) }
            state.nextID += 1
            state.subscribers[state.nextID] = Subscriber(tenantID: tenantID, userID: userID, continuation: continuation)
            return state.nextID
        }
        return Subscription(id: id, signals: signals)
    }

    func unsubscribe(_ id: UInt64) {
        let subscriber = state.withLock { $0.subscribers.removeValue(forKey: id) }
        subscriber?.continuation.finish()
    }

    /// Listens, ticks and purges until graceful shutdown, then ends every stream.
    func run() async throws {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.listen() }
            group.addTask { await self.tick() }
            try? await gracefulShutdown()
            group.cancelAll()
        }
        let subscribers = state.withLock { state -> [Subscriber] in
            state.closed = true
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.continuation.finish() }
    }

    private func listen() async {
        for await event in PostgresListener(conninfo: conninfo, channels: [Self.channel], logger: logger) {
            if Task.isCancelled { return }
            switch event {
            case .connected:
                wake { _ in true }
            case .notification(let notification):
                // Payload "tenant:id"; the id itself is not needed, streams read by their own position.
                guard let tenant = notification.payload.split(separator: ":").first.flatMap({ Int64($0) }) else { continue }
                wake { $0 == tenant }
            }
        }
    }

    /// Keep-alive ticks; streams also use them to notice a revoked session. The same
    /// timer purges events older than 24 hours, about once an hour.
    private func tick() async {
        var ticks = 0
        while !Task.isCancelled {
            try? await Task.sleep(for: heartbeat)
            if Task.isCancelled { return }
            let subscribers = state.withLock { Array($0.subscribers.values) }
            for subscriber in subscribers { subscriber.continuation.yield(.tick) }
            ticks += 1
            if ticks % max(1, Int(3600 / heartbeat.components.seconds)) == 1 {
                do {
                    try await pool.query("SELECT purge_events()")
                } catch {
                    logger.warning("purging old events failed", metadata: ["error": "\(error)"])
                }
            }
        }
    }

    private func wake(_ tenantMatches: (Int64) -> Bool) {
        let subscribers = state.withLock { $0.subscribers.values.filter { tenantMatches($0.tenantID) } }
        for subscriber in subscribers { subscriber.continuation.yield(.wake) }
    }
}
