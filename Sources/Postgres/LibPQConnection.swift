import CLibPQ
import Foundation
import NIOPosix
import Synchronization

/// One libpq connection, blocking. Owns its `PGconn` and frees it in `deinit`.
///
/// Its methods block: the pool calls them on its own thread pool, never on an
/// event loop or the cooperative executor. `@unchecked Sendable` is sound because
/// every use of the handle happens under `lock`, and the pool lends a connection
/// to one borrower at a time anyway.
final class LibPQConnection: @unchecked Sendable {
    let handle: OpaquePointer
    let lock = NSLock()
    /// SQL text to prepared-statement name, per connection since prepared
    /// statements live in the server session.
    var preparedStatements: [String: String] = [:]
    /// Names are never reused, even after the cache is cleared, since the server may still hold the old ones.
    private var nextStatementNumber = 0
    /// Our SQL is a fixed set of shapes; the cap only guards against a caller
    /// that builds many distinct texts, which then run unprepared.
    static let preparedStatementLimit = 512
    /// `BEGIN` and the transaction's settings, not sent yet: they go out with the
    /// transaction's first statement, in the same trip to the pool's thread (see
    /// `PostgresPool.withTransaction`).
    var deferredBegin: String?

    /// Connects, blocking, from a `postgres://` URL or `key=value` conninfo.
    init(conninfo: String) throws {
        guard let handle = PQconnectdb(conninfo) else {
            throw PostgresError(kind: .connectionFailed, message: "libpq could not allocate a connection")
        }
        guard PQstatus(handle) == CONNECTION_OK else {
            let message = Self.connectionMessage(handle)
            PQfinish(handle)
            throw PostgresError(kind: .connectionFailed, message: message)
        }
        self.handle = handle
        // Decoding expects ISO dates in UTC and UTF-8 text, whatever the server's defaults.
        _ = try execute(simple: "SET DateStyle = ISO; SET TimeZone = 'UTC'; SET client_encoding = 'UTF8'")
    }

    deinit {
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

    /// False once the connection broke; the pool then replaces it.
    var isHealthy: Bool {
        lock.withLock { PQstatus(handle) == CONNECTION_OK }
    }

    /// True when idle outside any transaction, the only state in which a
    /// connection may go back to the pool.
    var isIdle: Bool {
        lock.withLock {
            PQstatus(handle) == CONNECTION_OK && PQtransactionStatus(handle) == PQTRANS_IDLE && deferredBegin == nil
                && PQpipelineStatus(handle) == PQ_PIPELINE_OFF
        }
    }

    /// A non-blocking look at an idle connection: if the server closed it
    /// (restart, `pg_terminate_backend`), the socket is readable and libpq
    /// learns of it here rather than in the middle of the next query.
    func probeIdle() -> Bool {
        lock.withLock {
            // A server that ends a session first sends an error, then closes the socket;
            // libpq notices the close only on a later read, hence the loop.
            for _ in 0..<3 {
                guard PQstatus(handle) == CONNECTION_OK else { return false }
                var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
                let ready = poll(&descriptor, 1, 0)
                if ready < 0 { return false }
                if ready == 0 { return true }
                if PQconsumeInput(handle) == 0 { return false }
                // Only the listener expects notifications; here they are stray and dropped.
                while let notify = PQnotifies(handle) { PQfreemem(notify) }
            }
            return PQstatus(handle) == CONNECTION_OK
        }
    }

    // MARK: - Transactions

    /// Opens a transaction lazily: `BEGIN` and `set_config(name, value, true)` for each
    /// setting are sent in one message just before the next statement. Values are
    /// quoted by libpq (`PQescapeLiteral`), never spliced raw.
    func deferBegin(settings: [(String, String)]) throws {
        try lock.withLock {
            var sql = "BEGIN"
            for (name, value) in settings {
                sql += "; SELECT set_config(\(try quote(name)), \(try quote(value)), true)"
            }
            deferredBegin = sql
        }
    }

    /// Ends the transaction: nothing to send when it never reached the server.
    func endTransaction(commit: Bool) throws {
        try lock.withLock {
            if deferredBegin != nil {
                deferredBegin = nil
                return
            }
            _ = try check(PQexec(handle, commit ? "COMMIT" : "ROLLBACK"))
        }
    }

    /// Whether ending the transaction needs a round trip (it started on the server).
    var transactionStarted: Bool {
        lock.withLock { deferredBegin == nil && PQtransactionStatus(handle) != PQTRANS_IDLE }
    }

    private func sendDeferredBegin() throws {
        guard let sql = deferredBegin else { return }
        deferredBegin = nil
        _ = try check(PQexec(handle, sql))
    }

    private func quote(_ text: String) throws -> String {
        guard !text.utf8.contains(0), let quoted = PQescapeLiteral(handle, text, text.utf8.count) else {
            throw PostgresError(kind: .invalidValue, message: "a setting cannot be quoted")
        }
        defer { PQfreemem(quoted) }
        return String(cString: quoted)
    }

    // MARK: - Statements

    /// Runs one statement with bound parameters and returns its rows. Blocks.
    func execute(_ query: PostgresQuery) throws -> PostgresRows {
        try lock.withLock {
            try sendDeferredBegin()
            let sql = query.sql
            if query.prepared, let name = try preparedName(for: sql, query: query) {
                return try withParameters(query.binds) { count, values, lengths, formats in
                    try check(PQexecPrepared(handle, name, count, values, lengths, formats, 0))
                }
            }
            return try withParameters(query.binds) { count, values, lengths, formats in
                let types = query.binds.map { Oid($0.oid) }
                return try check(PQexecParams(handle, sql, count, types, values, lengths, formats, 0))
            }
        }
    }

    /// Runs SQL text without parameters through the simple query protocol,
    /// which allows several statements (migrations). Never pass input here.
    @discardableResult
    func execute(simple sql: String) throws -> PostgresRows {
        try lock.withLock {
            try sendDeferredBegin()
            return try check(PQexec(handle, sql))
        }
    }

    /// Quotes an identifier (a channel name for `LISTEN`) with libpq's own escaping.
    func escapeIdentifier(_ identifier: String) throws -> String {
        try lock.withLock {
            guard let escaped = PQescapeIdentifier(handle, identifier, identifier.utf8.count) else {
                throw PostgresError(kind: .invalidConfiguration, message: "invalid identifier")
            }
            defer { PQfreemem(escaped) }
            return String(cString: escaped)
        }
    }

    // MARK: - Notifications (used by PostgresListener)

    var socket: Int32 { lock.withLock { PQsocket(handle) } }

    /// Reads what arrived on the socket and returns pending notifications.
    func consumeNotifications() throws -> [PostgresNotification] {
        try lock.withLock {
            guard PQconsumeInput(handle) == 1 else {
                throw lostConnection()
            }
            var notifications: [PostgresNotification] = []
            while let notify = PQnotifies(handle) {
                notifications.append(PostgresNotification(
                    channel: String(cString: notify.pointee.relname),
                    payload: String(cString: notify.pointee.extra),
                    processID: notify.pointee.be_pid))
                PQfreemem(notify)
            }
            return notifications
        }
    }

    // MARK: - Private

    func preparedName(for sql: String, query: PostgresQuery) throws -> String? {
        if let name = preparedStatements[sql] { return name }
        guard preparedStatements.count < Self.preparedStatementLimit else { return nil }
        let name = "lr\(nextStatementNumber)"
        nextStatementNumber += 1
        let types = query.binds.map { Oid($0.oid) }
        _ = try check(PQprepare(handle, name, sql, Int32(types.count), types))
        preparedStatements[sql] = name
        return name
    }

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

/// A `NOTIFY` delivered to a listening connection.
public struct PostgresNotification: Sendable, Equatable {
    public let channel: String
    public let payload: String
    public let processID: Int32
}
