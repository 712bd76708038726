import CLibPQ
import Foundation
import NIOPosix
import Synchronization

/// One libpq connection. Owns its `PGconn` and frees it in `deinit`.
///
/// A pool's connections run in libpq's non-blocking mode: a statement is sent from the task
/// that runs it, which then suspends in `SocketReadiness` until the answer arrives
/// (`LibPQConnection+Pipeline.swift`), so no thread blocks on the database. Opening a
/// connection blocks (the pool opens them on a thread of its own).
///
/// `@unchecked Sendable` is sound because a connection has one user at a time: the pool lends
/// it to one borrower, whose accesses are ordered by the pool's lock and by the task's own
/// suspension points.
final class LibPQConnection: @unchecked Sendable {
    let handle: OpaquePointer
    /// Where the connection waits for its socket.
    let readiness: SocketReadiness
    /// Statement template (`PostgresQuery.template`) to prepared-statement name, per
    /// connection since prepared statements live in the server session.
    var preparedStatements: [String: String] = [:]
    /// Names are never reused, even after the cache is cleared, since the server may still hold the old ones.
    var nextStatementNumber = 0
    /// Our SQL is a fixed set of shapes; the cap only guards against a caller
    /// that builds many distinct texts, which then run unprepared.
    static let preparedStatementLimit = 512
    /// The settings of a transaction whose `BEGIN` is not sent yet: it goes out in one
    /// pipeline with the transaction's first statement (see `PostgresPool.withTransaction`).
    var deferredBegin: [(String, String)]?
    /// Whether the transaction's last statement went out with its `COMMIT` (`executeCommitting`):
    /// nothing is left for `endTransaction` to send, and no statement may follow.
    var committedWithLastStatement = false
    /// Settings every statement's transaction gets, ahead of its own (`statement_timeout`):
    /// sent with `set_config(name, value, true)` in the statement's pipeline, so they hold
    /// through PgBouncer in transaction mode too, where a session `SET` would stay behind on
    /// one server connection. Set once, when the connection opens: with `plan_cache_mode`
    /// where it was asked for and the database has no Citus.
    private(set) var statementSettings: [(String, String)]
    /// Whether the database has Citus, which forwards `SET LOCAL` to its workers but never
    /// `set_config`: a transaction's own settings (the tenant) must be `SET LOCAL` there.
    private(set) var distributed = false
    /// What `PQcancel` needs, taken once after connecting: `PQcancel` is safe to call from
    /// any thread while the connection is in use, `PQgetCancel` is not.
    let cancelHandle: OpaquePointer?
    /// Where the blocking `PQcancel` runs (it opens a connection of its own to the server).
    let cancelThreads: NIOThreadPool
    /// The cancel request in flight for the current statement, if its task was cancelled.
    let pendingCancel = Mutex<Task<Void, Never>?>(nil)
    /// Whether the server said it is ending the session (an error of severity FATAL or PANIC
    /// outside any statement: `pg_terminate_backend`, `idle_session_timeout`, shutdown). Its
    /// socket may stay open a while after that (Citus's coordinator closes its worker
    /// connections first), so `probeIdle` cannot wait for the close alone.
    private var serverEndedSession = false
    /// libpq's own notice receiver, which prints notices on standard error as before.
    private var libpqNoticeReceiver: PQnoticeReceiver?

    /// Connects, blocking, from a `postgres://` URL or `key=value` conninfo; the connection
    /// then runs non-blocking and waits for its socket in `readiness`.
    init(
        conninfo: String, readiness: SocketReadiness,
        statementSettings: [(String, String)] = [], plansPreparedOnce: Bool = false, cancelThreads: NIOThreadPool
    ) throws {
        guard let handle = PQconnectdb(conninfo) else {
            throw PostgresError(kind: .connectionFailed, message: "libpq could not allocate a connection")
        }
        guard PQstatus(handle) == CONNECTION_OK else {
            let message = Self.connectionMessage(handle)
            PQfinish(handle)
            throw PostgresError(kind: .connectionFailed, message: message)
        }
        self.handle = handle
        self.readiness = readiness
        self.statementSettings = statementSettings
        self.cancelThreads = cancelThreads
        self.cancelHandle = PQgetCancel(handle)
        libpqNoticeReceiver = PQsetNoticeReceiver(handle, { context, result in
            guard let context else { return }
            let connection = Unmanaged<LibPQConnection>.fromOpaque(context).takeUnretainedValue()
            connection.noticed(result)
        }, Unmanaged.passUnretained(self).toOpaque())
        // Results come in binary (`resultFormat` 1), so decoding depends on no setting but the
        // text's encoding (UTF-8); SQL that renders dates as text sees ISO dates in UTC.
        //
        // Whether the database has Citus is asked in the same round trip (the last statement's
        // rows are the answer), once per connection, as a database may gain it: a setting Citus
        // cannot plan with (`plan_cache_mode`) joins the others only where it is absent, and so
        // do a transaction's own settings (`settingsStatements`).
        distributed = try !executeBlocking(simple: """
            SET DateStyle = ISO; SET TimeZone = 'UTC'; SET client_encoding = 'UTF8';
            SELECT 1 FROM pg_extension WHERE extname = 'citus'
            """).isEmpty
        if plansPreparedOnce, !distributed {
            self.statementSettings.append(("plan_cache_mode", "force_generic_plan"))
        }
        if PQsetnonblocking(handle, 1) != 0 {
            throw lostConnection()
        }
    }

    /// A notice, or an error that came outside any statement (libpq passes those on as notices).
    private func noticed(_ result: OpaquePointer?) {
        if let severity = PQresultErrorField(result, Int32(UInt8(ascii: "V"))) {
            let text = String(cString: severity)
            if text == "FATAL" || text == "PANIC" { serverEndedSession = true }
        }
        libpqNoticeReceiver?(nil, result)
    }

    deinit {
        if let cancelHandle { PQfreeCancel(cancelHandle) }
        PQfinish(handle)
    }

    /// Checks a connection string's syntax without connecting.
    static func validate(conninfo: String) throws {
        var errorMessage: UnsafeMutablePointer<CChar>?
        let options = PQconninfoParse(conninfo, &errorMessage)
        defer {
            if let options { PQconninfoFree(options) }
            if let errorMessage { PQfreemem(errorMessage) }
        }
        if options == nil {
            let message = errorMessage.map { String(cString: $0) } ?? "invalid connection string"
            throw PostgresError(kind: .invalidConfiguration, message: message.trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }

    /// True when idle outside any transaction with nothing in flight, the only state in
    /// which a connection may go back to the pool.
    var isIdle: Bool {
        isOpen && PQtransactionStatus(handle) == PQTRANS_IDLE && deferredBegin == nil
            && PQpipelineStatus(handle) == PQ_PIPELINE_OFF
    }

    /// A non-blocking look at an idle connection: if the server closed it
    /// (restart, `pg_terminate_backend`), the socket is readable and libpq
    /// learns of it here rather than in the middle of the next query.
    func probeIdle() -> Bool {
        // A server that ends a session first sends an error of severity FATAL, which libpq
        // hands to `noticed` outside a statement, then closes the socket (libpq notices the
        // close only on a later read, hence the loop; and the close may come much later).
        for _ in 0..<3 {
            guard isOpen else { return false }
            var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, 0)
            if ready < 0 { return false }
            if ready == 0 { return true }
            if PQconsumeInput(handle) == 0 { return false }
            // No connection of ours LISTENs: a notification here is stray and dropped.
            while let notify = PQnotifies(handle) { PQfreemem(notify) }
        }
        return isOpen
    }

    /// Connected, and the server has not said it is ending the session.
    private var isOpen: Bool { PQstatus(handle) == CONNECTION_OK && !serverEndedSession }

    // MARK: - Transactions

    /// Opens a transaction lazily: `BEGIN` and `set_config(name, value, true)` for each
    /// setting go out with the next statement, in the same pipeline.
    func deferBegin(settings: [(String, String)]) {
        deferredBegin = settings
        committedWithLastStatement = false
    }

    // MARK: - Blocking (connecting)

    /// Runs SQL text without parameters through the simple query protocol, blocking.
    /// Only before a pool's connection turns non-blocking (the session settings at connect).
    @discardableResult
    func executeBlocking(simple sql: String) throws -> PostgresRows {
        try check(PQexec(handle, sql))
    }

    // MARK: - Private

    /// Refuses a value libpq cannot send: it takes text values as C strings, so a NUL
    /// would silently cut the value short.
    static func checkSendable(_ binds: [PostgresBind]) throws {
        for bind in binds {
            if case .text(let text) = bind.value, text.utf8.contains(0) {
                throw PostgresError(kind: .invalidValue, message: "a text parameter contains a NUL character, which PostgreSQL text cannot hold")
            }
        }
    }

    func withParameters<T>(
        _ binds: [PostgresBind],
        _ body: (Int32, [UnsafePointer<CChar>?], [Int32], [Int32]) throws -> T
    ) throws -> T {
        try Self.checkSendable(binds)
        // One buffer holds every value, NUL-terminated; pointers into it stay valid for the call.
        var buffer = [UInt8]()
        var starts = [Int?]()
        var lengths = [Int32]()
        var formats = [Int32]()
        starts.reserveCapacity(binds.count)
        for bind in binds {
            switch bind.value {
            case .null:
                starts.append(nil); lengths.append(0); formats.append(0)
            case .text(let text):
                starts.append(buffer.count)
                buffer.append(contentsOf: text.utf8)
                buffer.append(0)
                lengths.append(0); formats.append(0)
            case .binary(let bytes):
                starts.append(buffer.count)
                buffer.append(contentsOf: bytes)
                buffer.append(0)
                lengths.append(Int32(bytes.count)); formats.append(1)
            case .bigEndian(let bits, let byteCount):
                starts.append(buffer.count)
                for index in stride(from: byteCount - 1, through: 0, by: -1) {
                    buffer.append(UInt8(truncatingIfNeeded: bits >> (UInt64(index) * 8)))
                }
                lengths.append(Int32(byteCount)); formats.append(1)
            }
        }
        return try buffer.withUnsafeBytes { raw in
            let base = raw.baseAddress?.assumingMemoryBound(to: CChar.self)
            let values: [UnsafePointer<CChar>?] = starts.map { start -> UnsafePointer<CChar>? in
                guard let start, let base else { return nil }
                return UnsafePointer(base + start)
            }
            return try body(Int32(binds.count), values, lengths, formats)
        }
    }

    /// Turns a `PGresult` into rows or a `PostgresError`, and frees it.
    func check(_ result: OpaquePointer?) throws -> PostgresRows {
        guard let result else { throw lostConnection() }
        defer { PQclear(result) }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return PostgresRows(result: result)
        default:
            // Field codes from postgres_ext.h (PG_DIAG_*), which are C character macros Swift cannot import.
            func field(_ code: Character) -> String? {
                PQresultErrorField(result, Int32(code.asciiValue!)).map { String(cString: $0) }
            }
            let sqlState = field("C")
            // A statement prepared before a schema change can fail once; forget it so the next run re-prepares.
            if sqlState == "0A000" || sqlState == "26000" { preparedStatements.removeAll() }
            let lost = PQstatus(handle) != CONNECTION_OK
            throw PostgresError(
                kind: lost && sqlState == nil ? .connectionLost : .server,
                sqlState: sqlState,
                message: field("M") ?? Self.connectionMessage(handle),
                detail: field("D"),
                hint: field("H"),
                schemaName: field("s"),
                tableName: field("t"),
                columnName: field("c"),
                constraintName: field("n"))
        }
    }

    /// The error for a connection that broke, with libpq's own message.
    func lostConnection() -> PostgresError {
        PostgresError(kind: .connectionLost, message: Self.connectionMessage(handle))
    }

    static func connectionMessage(_ handle: OpaquePointer) -> String {
        guard let message = PQerrorMessage(handle) else { return "connection failed" }
        return String(cString: message).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
