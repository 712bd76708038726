import Admission
import Logging
import NIOPosix
import ServiceLifecycle

/// A bounded pool of libpq connections with async acquire.
///
/// - At most `maxConnections` connections exist; callers past that wait in
///   FIFO order, and fail with `PostgresError.Kind.poolTimeout` after
///   `acquireTimeout` (the HTTP layer answers `503` with `Retry-After`).
/// - Connections are opened lazily, checked without blocking before reuse and
///   replaced when the server closed them (restart, `pg_terminate_backend`).
/// - Statements run in libpq's non-blocking mode: the calling task sends and suspends,
///   and one thread (`SocketReadiness`) waits on every connection's socket, so a slow
///   query holds up no thread. Only opening a connection blocks, on a thread of its own.
/// - Cancelling a statement's task cancels the statement on the server, then drains it, so
///   the connection comes back healthy (`LibPQConnection+Cancel.swift`).
/// - As a `Service` it closes every connection on graceful shutdown.
public final class PostgresPool: Sendable, Service {
    public struct Configuration: Sendable {
        /// A `postgres://` URL or `key=value` conninfo.
        public var conninfo: String
        public var maxConnections: Int
        public var acquireTimeout: Duration
        /// The server ends any statement of the pool's that runs longer (SQLSTATE `57014`);
        /// nil leaves the server's own `statement_timeout`. Set per transaction, with the
        /// statement (see `LibPQConnection.statementSettings`).
        public var statementTimeout: Duration?
        /// Whether a prepared statement is planned once, for every value
        /// (`plan_cache_mode = force_generic_plan`, set with each transaction as the timeout
        /// is). What `PostgresQuery.prepared` promises; PostgreSQL's own choice (`auto`) plans
        /// the first five runs for their values and then goes on doing so whenever the generic
        /// plan's estimate is the higher, which for a large statement can be every run: a
        /// viewport page spent 2 ms planning for 1.4 ms running (bench/results/
        /// 2026-11-29-generic-plans.md). A statement whose best plan depends on its values is
        /// not prepared, and is planned for them each time whatever this says. Off by default:
        /// the setting's statement then goes with every statement, and some (`CREATE INDEX
        /// CONCURRENTLY` in a migration) must run alone. Never where the database has Citus
        /// (each connection looks at `pg_extension` when it opens, and leaves the setting out
        /// there): a generic plan leaves Citus without the distribution column's value, and it
        /// cannot plan a statement with a join or a subquery then (SQLSTATE 0A000, "could not
        /// create distributed plan").
        public var plansPreparedOnce: Bool

        public init(
            conninfo: String, maxConnections: Int = 10, acquireTimeout: Duration = .seconds(5),
            statementTimeout: Duration? = nil, plansPreparedOnce: Bool = false
        ) {
            self.conninfo = conninfo
            self.maxConnections = maxConnections
            self.acquireTimeout = acquireTimeout
            self.statementTimeout = statementTimeout
            self.plansPreparedOnce = plansPreparedOnce
        }

        /// What every statement's transaction sets first.
        var statementSettings: [(String, String)] {
            var settings = [(String, String)]()
            if let timeout = statementTimeout {
                let milliseconds = timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000
                settings.append(("statement_timeout", String(max(milliseconds, 1))))
            }
            return settings
        }
    }

    /// A snapshot for metrics and tests.
    public struct Statistics: Sendable, Equatable {
        public var open: Int
        public var inUse: Int
        public var idle: Int
        public var waiting: Int
    }

    public let configuration: Configuration
    /// Where the connections wait for their sockets.
    let readiness: SocketReadiness
    /// Opens connections: `PQconnectdb` blocks (name lookup, authentication).
    let connectThreads: NIOThreadPool
    private let logger: Logger
    /// The pool's connections and its waiters, behind one lock.
    private let queue: BoundedWaitQueue<State, Void, Lease>

    private enum Lease: Sendable {
        case reuse(LibPQConnection)
        case open
    }

    private struct State: Sendable {
        var idle: [LibPQConnection] = []
        var open = 0
        var inUse = 0
        var closed = false
    }

    /// Creates the pool; no connection is opened until the first query.
    public init(configuration: Configuration, logger: Logger = Logger(label: "postgres.pool")) throws {
        precondition(configuration.maxConnections > 0, "a pool needs at least one connection")
        try LibPQConnection.validate(conninfo: configuration.conninfo)
        self.configuration = configuration
        self.logger = logger
        let timeout = configuration.acquireTimeout
        // Waiters are bounded by the callers there are (the service bounds those); no cap here.
        self.queue = BoundedWaitQueue(
            state: State(), timeout: timeout,
            timedOut: { PostgresError(kind: .poolTimeout, message: "no database connection became free within \(timeout)") },
            full: { PostgresError(kind: .poolTimeout, message: "too many callers wait for a database connection") })
        self.readiness = try SocketReadiness()
        self.connectThreads = NIOThreadPool(numberOfThreads: min(configuration.maxConnections, 2))
        self.connectThreads.start()
    }

    deinit {
        // close() shuts the threads down; a pool dropped without it still must not leak them.
        readiness.shutdown()
        connectThreads.shutdownGracefully { _ in }
    }

    public var statistics: Statistics {
        queue.withState { state, waiters in
            Statistics(open: state.open, inUse: state.inUse, idle: state.idle.count, waiting: waiters.count)
        }
    }

    /// What a task must pass before it borrows a connection, set by the caller for a scope
    /// (`$admission.withValue`): the service bounds each user's and tenant's share of the pool
    /// this way. It returns what gives the share back, called once the connection is returned.
    /// A connection borrowed inside another's `withConnection` in the same task passes freely.
    ///
    /// A struct around the closure, not the closure itself: a task-local whose value is a
    /// function type crashed in release builds (Swift 6.3: `swift_task_localValuePush` read
    /// the value's type metadata from a null pointer on the first request; debug builds ran).
    public struct Admission: Sendable {
        public let admit: @Sendable () async throws -> @Sendable () -> Void
        public init(_ admit: @escaping @Sendable () async throws -> @Sendable () -> Void) { self.admit = admit }
    }
    @TaskLocal public static var admission: Admission?
    @TaskLocal private static var admitted = false

    /// Lends a connection to `body` and takes it back afterwards, whatever happens. A
    /// `PostgresError` thrown without a call site of its own (a pool timeout) gets this call's.
    ///
    /// `logger` is the caller's (a request's, with its request id): what the pool and the
    /// connection log about this call goes there. Without one, the pool's own.
    public func withConnection<T: Sendable>(
        logger: Logger? = nil, fileID: StaticString = #fileID, line: UInt = #line,
        _ body: (PostgresConnection) async throws -> T
    ) async throws -> T {
        let logger = logger ?? self.logger
        return try await attaching(PostgresCallSite(fileID: fileID, line: line)) {
            guard let admission = Self.admission, !Self.admitted else { return try await lend(logger: logger, body) }
            let giveBack = try await admission.admit()
            defer { giveBack() }
            return try await Self.$admitted.withValue(true) { try await lend(logger: logger, body) }
        }
    }

    private func lend<T: Sendable>(logger: Logger, _ body: (PostgresConnection) async throws -> T) async throws -> T {
        let waited = ContinuousClock.now
        let handle = try await acquire(logger: logger)
        let wait = ContinuousClock.now - waited
        if wait > .milliseconds(100) {
            logger.debug("waited for a database connection", metadata: ["wait_ms": "\(wait.components.seconds * 1000 + wait.components.attoseconds / 1_000_000_000_000_000)"])
        }
        let connection = PostgresConnection(handle: handle, logger: logger)
        do {
            let result = try await body(connection)
            release(handle, logger: logger)
            return result
        } catch {
            release(handle, logger: logger)
            throw error
        }
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    /// `settings` are set with `set_config(name, value, true)` first, so they last
    /// exactly as long as the transaction (the tenant for row-level security).
    public func withTransaction<T: Sendable>(
        settings: [(String, String)] = [], logger: Logger? = nil, fileID: StaticString = #fileID, line: UInt = #line,
        _ body: (PostgresConnection) async throws -> T
    ) async throws -> T {
        try await withConnection(logger: logger, fileID: fileID, line: line) { connection in
            // BEGIN and the settings ride along with the body's first statement, in one
            // pipeline: a read-only transaction costs a round trip for its query and one
            // for COMMIT.
            connection.handle.deferBegin(settings: settings)
            do {
                let result = try await body(connection)
                try await connection.endTransaction(commit: true)
                return result
            } catch {
                // A broken connection cannot roll back; the pool discards it on release.
                _ = try? await connection.endTransaction(commit: false)
                throw error
            }
        }
    }

    /// Runs one statement on any free connection.
    @discardableResult
    public func query(
        _ query: PostgresQuery, logger: Logger? = nil, fileID: StaticString = #fileID, line: UInt = #line
    ) async throws -> PostgresRows {
        let site = PostgresCallSite(fileID: fileID, line: line)
        return try await withConnection(logger: logger, fileID: fileID, line: line) { try await $0.query(query, at: site) }
    }

    /// Runs one statement as one implicit transaction, pipelined with the
    /// `set_config(name, value, true)` of `settings` (the tenant for row-level security):
    /// one round trip; `withTransaction` needs two (`BEGIN` with the settings and the
    /// statement, then `COMMIT`) for the same. Several such reads on one connection:
    /// `withPipelinedReads(settings:_:)`.
    /// For a read that is one statement; an error rolls it back like any transaction.
    @discardableResult
    public func query(
        _ query: PostgresQuery, settings: [(String, String)], logger: Logger? = nil, fileID: StaticString = #fileID, line: UInt = #line
    ) async throws -> PostgresRows {
        let site = PostgresCallSite(fileID: fileID, line: line)
        return try await withPipelinedReads(settings: settings, logger: logger, fileID: fileID, line: line) {
            try await $0.query(query, at: site)
        }
    }

    /// Service entry point: waits for graceful shutdown, then closes the pool.
    public func run() async throws {
        try? await gracefulShutdown()
        await close()
    }

    /// Closes idle connections, fails waiters and stops the threads. Connections
    /// still lent out are closed when they come back; a statement still waiting for
    /// the server fails with `.poolClosed`.
    public func close() async {
        let idle = queue.withState { state, waiters -> [LibPQConnection] in
            state.closed = true
            waiters.failAll(PostgresError.poolClosed)
            defer { state.idle = [] }
            state.open -= state.idle.count
            return state.idle
        }
        _ = idle  // released here: deinit calls PQfinish
        readiness.shutdown()
        try? await connectThreads.shutdownGracefully()
    }

    // MARK: - Acquire and release

    /// A connection: an idle one, a free slot to open one in, or, when every slot is in use,
    /// the first one handed back (`release`), in arrival order, within `acquireTimeout`.
    private func acquire(logger: Logger) async throws -> LibPQConnection {
        let maxConnections = configuration.maxConnections
        let lease = try await queue.wait(for: ()) { state -> Lease? in
            if state.closed { throw PostgresError.poolClosed }
            if let connection = state.idle.popLast() {
                state.inUse += 1
                return .reuse(connection)
            }
            if state.open < maxConnections {
                state.open += 1
                state.inUse += 1
                return .open
            }
            return nil
        }
        return try await connect(lease, logger: logger)
    }

    /// Turns a lease into a working connection: a reused one is probed first,
    /// and a dead one is replaced in the same slot.
    private func connect(_ lease: Lease, logger: Logger) async throws -> LibPQConnection {
        if case .reuse(let connection) = lease, connection.probeIdle() {
            return connection
        }
        if case .reuse = lease {
            logger.info("replacing a closed database connection")
        }
        let conninfo = configuration.conninfo
        let readiness = self.readiness
        let settings = configuration.statementSettings
        let plansPreparedOnce = configuration.plansPreparedOnce
        let threads = connectThreads
        do {
            return try await connectThreads.runIfActive {
                try LibPQConnection(
                    conninfo: conninfo, readiness: readiness, statementSettings: settings, plansPreparedOnce: plansPreparedOnce,
                    cancelThreads: threads)
            }
        } catch {
            giveUpSlot()
            if let error = error as? PostgresError { throw error }
            throw PostgresError.poolClosed
        }
    }

    private func release(_ connection: LibPQConnection, logger: Logger) {
        let reusable = connection.isIdle
        queue.withState { state, waiters in
            if state.closed || !reusable {
                state.open -= 1
                state.inUse -= 1
                // The slot is free again: let the first waiter open a fresh connection.
                if !state.closed, !waiters.isEmpty {
                    state.open += 1
                    state.inUse += 1
                    waiters.grantFirst(.open)
                }
                return
            }
            if !waiters.isEmpty {
                waiters.grantFirst(.reuse(connection))
                return
            }
            state.inUse -= 1
            state.idle.append(connection)
        }
        if !reusable { logger.debug("discarding a database connection that is broken or inside a transaction") }
    }

    /// A connection could not be opened: free its slot, and let a waiter try in turn.
    private func giveUpSlot() {
        queue.withState { state, waiters in
            state.open -= 1
            state.inUse -= 1
            guard !state.closed, !waiters.isEmpty else { return }
            state.open += 1
            state.inUse += 1
            waiters.grantFirst(.open)
        }
    }
}
