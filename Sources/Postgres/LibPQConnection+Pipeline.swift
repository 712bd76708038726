import CLibPQ

/// Statements on a non-blocking connection: sent from the calling task, which suspends in
/// `SocketReadiness` while the server works, so no thread waits on the database.
///
/// Everything a statement needs goes out in one libpq pipeline, ended by a Sync: a deferred
/// `BEGIN` with its settings, the `Parse` of a statement not yet prepared on this connection,
/// and the statement itself. One round trip, however many of those there are.
extension LibPQConnection {
    /// Runs one statement with bound parameters and returns its rows. Inside a transaction
    /// whose `BEGIN` is still deferred, the `BEGIN` and its settings go in the same pipeline.
    /// `checks` go just before it, in the same pipeline and transaction: an error one raises
    /// is the call's, and the statement does not run.
    func execute(_ query: PostgresQuery, after checks: [PostgresQuery] = []) async throws -> PostgresRows {
        precondition(!committedWithLastStatement, "a statement after the one that committed its transaction")
        if deferredBegin == nil, PQtransactionStatus(handle) == PQTRANS_IDLE {
            // A statement outside any transaction: the statement settings (the timeout) go in it.
            return try await executeInImplicitTransaction(query, after: checks, settings: [])
        }
        return try await runPipeline(try takeDeferredBegin() + checks + [query])
    }

    /// Runs `query` in a transaction of its own with `settings` set for it, in one pipeline:
    /// one round trip. Without Citus (or without settings of its own) that is the settings'
    /// `set_config` and `query`, one implicit transaction up to the Sync (two statements where
    /// there were five).
    ///
    /// With Citus and settings it is `BEGIN`, settings, `query` and `COMMIT`: Citus sends the
    /// settings on to the workers only as `SET LOCAL` (never `set_config`), and `SET LOCAL`
    /// needs a transaction block (outside one it does nothing). A failed statement leaves the
    /// block aborted past the Sync, so it is rolled back here before the connection goes back
    /// to the pool.
    func executeInImplicitTransaction(
        _ query: PostgresQuery, after checks: [PostgresQuery] = [], settings: [(String, String)]
    ) async throws -> PostgresRows {
        precondition(deferredBegin == nil, "an implicit transaction cannot run inside a transaction")
        if !distributed || settings.isEmpty {
            // Everything up to the Sync is one implicit transaction, and `set_config(…, true)`
            // holds in it: no `BEGIN` and `COMMIT` of its own, and nothing to roll back (an
            // error ends it at the Sync).
            return try await runPipeline(try settingsStatements(settings) + checks + [query])
        }
        let statements = try ["BEGIN"] + settingsStatements(settings) + checks + [query, "COMMIT"]
        do {
            return try await runPipeline(statements, answer: statements.count - 2)
        } catch {
            if PQtransactionStatus(handle) != PQTRANS_IDLE {
                // Not cancellable, like endTransaction's: it is what leaves the connection reusable.
                _ = try? await runPipeline(["ROLLBACK"], cancellable: false)
            }
            throw error
        }
    }

    /// Runs the transaction's last statement with its `COMMIT` in the same pipeline (behind a
    /// `BEGIN` still deferred, when it is the only one): a write saves the round trip
    /// `endTransaction` would take. A failed statement leaves the `COMMIT` unrun (the pipeline
    /// is aborted up to its Sync) and the transaction aborted, for `endTransaction` to roll
    /// back; a failed `COMMIT` (a deferred constraint) has ended it already.
    func executeCommitting(_ query: PostgresQuery, after checks: [PostgresQuery] = []) async throws -> PostgresRows {
        precondition(!committedWithLastStatement, "a statement after the one that committed its transaction")
        precondition(deferredBegin != nil || PQtransactionStatus(handle) != PQTRANS_IDLE, "a committing statement outside a transaction")
        let statements = try takeDeferredBegin() + checks + [query, "COMMIT"]
        let rows = try await runPipeline(statements, answer: statements.count - 2)
        committedWithLastStatement = true
        return rows
    }

    /// Ends the transaction: nothing to send when it never reached the server, when its last
    /// statement committed it, or when a failed `COMMIT` ended it.
    func endTransaction(commit: Bool) async throws {
        committedWithLastStatement = false
        if deferredBegin != nil {
            deferredBegin = nil
            return
        }
        // Nothing to end: the last statement took its COMMIT along, or a failed COMMIT ended it.
        if PQtransactionStatus(handle) == PQTRANS_IDLE {
            return
        }
        // A rollback runs even for a cancelled task: it is what leaves the connection reusable.
        _ = try await runPipeline([commit ? "COMMIT" : "ROLLBACK"], cancellable: commit)
    }

    /// Runs SQL text without parameters through the simple query protocol, which allows
    /// several statements (migrations); the last statement's rows, or the first error.
    /// Never pass input here.
    @discardableResult
    func execute(simple sql: String) async throws -> PostgresRows {
        let begin = try takeDeferredBegin()
        if !begin.isEmpty { _ = try await runPipeline(begin) }
        try Task.checkCancellation()
        return try await cancellable {
            guard PQsendQuery(handle, sql) == 1 else { throw lostConnection() }
            try await flush()
            var outcome: Result<PostgresRows, any Error>?
            while let result = try await nextResult() {
                let step = Result { try check(result) }
                if case .failure = outcome {} else { outcome = step }
            }
            guard let outcome else { throw lostConnection() }
            return try outcome.get()
        }
    }

    /// The deferred `BEGIN` and its settings' statements, to send ahead of the next statement;
    /// none when no transaction waits to start.
    private func takeDeferredBegin() throws -> [PostgresQuery] {
        guard let settings = deferredBegin else { return [] }
        deferredBegin = nil
        return try ["BEGIN"] + settingsStatements(settings)
    }

    /// The statements that set the connection's statement settings and `settings` for the
    /// transaction they are sent in: one `set_config` statement for all of them, or, where the
    /// database has Citus, one for the statement settings and a `SET LOCAL` for each of
    /// `settings`, which Citus sends on to its workers (it never sends `set_config`).
    func settingsStatements(_ settings: [(String, String)]) throws -> [PostgresQuery] {
        guard distributed else { return Self.setConfig(statementSettings + settings).map { [$0] } ?? [] }
        return try (Self.setConfig(statementSettings).map { [$0] } ?? []) + settings.map { try Self.setLocal($0.0, to: $0.1) }
    }

    /// `SELECT set_config($1, $2, true), …`, or nil for no settings: the names and values are
    /// bound, so the text is the same for as many settings, prepared once per connection.
    static func setConfig(_ settings: [(String, String)]) -> PostgresQuery? {
        guard !settings.isEmpty else { return nil }
        let calls = settings.map { setting, value -> PostgresQuery in "set_config(\(setting), \(value), true)" }
        return "SELECT \(calls.joined(separator: ", "))"
    }

    /// `SET LOCAL "name" TO 'value'`. A utility statement takes no parameters, so both are
    /// quoted into the text (standard_conforming_strings: only the quote character needs
    /// doubling), which changes with the value: not prepared. A name PostgreSQL does not
    /// accept fails on the server, before the statement after it runs.
    static func setLocal(_ name: String, to value: String) throws -> PostgresQuery {
        guard !name.utf8.contains(0), !value.utf8.contains(0) else {
            throw PostgresError(kind: .invalidValue, message: "a setting contains a NUL character, which PostgreSQL text cannot hold")
        }
        let quotedName = "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        let quotedValue = "'" + value.replacingOccurrences(of: "'", with: "''") + "'"
        var set = PostgresQuery(stringLiteral: "SET LOCAL \(quotedName) TO \(quotedValue)")
        set.prepared = false
        return set
    }

    // MARK: - The pipeline

    /// What one queued command's result is for.
    private enum Queued {
        /// Preparing the statement of `template` as `name`: remembered once the server accepted it.
        case prepare(template: String, name: String)
        /// The statement at this index of the pipeline's statements.
        case statement(Int)
    }

    /// Sends `statements` in one pipeline ended by a Sync, preparing those not prepared yet in
    /// the same pipeline, and reads every result: the rows of the statement at `answer` (by
    /// default the last), or the first error.
    /// When `cancellable`, a cancelled task sends nothing, and a task cancelled meanwhile
    /// cancels the statements on the server (`cancellable(_:)`).
    func runPipeline(_ statements: [PostgresQuery], answer: Int? = nil, cancellable isCancellable: Bool = true) async throws -> PostgresRows {
        let answer = answer ?? statements.count - 1
        guard isCancellable else { return try await sendAndReadPipeline(statements, answer: answer) }
        try Task.checkCancellation()
        return try await cancellable { try await sendAndReadPipeline(statements, answer: answer) }
    }

    private func sendAndReadPipeline(_ statements: [PostgresQuery], answer: Int) async throws -> PostgresRows {
        // A value libpq cannot send fails here, before anything is queued: a pipeline left
        // half-sent could not be ended, and the connection would have to be thrown away.
        for statement in statements { try Self.checkSendable(statement.binds) }
        guard PQenterPipelineMode(handle) == 1 else { throw lostConnection() }
        var queued: [Queued] = []
        var preparing: [String: String] = [:]
        for (index, statement) in statements.enumerated() {
            // Known by its template: its `sql` is rendered only to prepare it, or to send it unprepared.
            let template = statement.template
            var name = statement.prepared ? (preparedStatements[template] ?? preparing[template]) : nil
            if statement.prepared, name == nil, preparedStatements.count + preparing.count < Self.preparedStatementLimit {
                let fresh = "lr\(nextStatementNumber)"
                nextStatementNumber += 1
                let types = statement.binds.map { Oid($0.oid) }
                guard PQsendPrepare(handle, fresh, statement.sql, Int32(types.count), types) == 1 else { throw lostConnection() }
                queued.append(.prepare(template: template, name: fresh))
                preparing[template] = fresh
                name = fresh
            }
            let sent = try withParameters(statement.binds) { count, values, lengths, formats -> Int32 in
                // Results in binary (resultFormat 1): fixed-width numbers and timestamps need no
                // parsing, and no calendar code (PostgresDecodable.swift).
                if let name {
                    return PQsendQueryPrepared(handle, name, count, values, lengths, formats, 1)
                }
                let types = statement.binds.map { Oid($0.oid) }
                return PQsendQueryParams(handle, statement.sql, count, types, values, lengths, formats, 1)
            }
            guard sent == 1 else { throw lostConnection() }
            queued.append(.statement(index))
        }
        guard PQpipelineSync(handle) == 1 else { throw lostConnection() }
        try await flush()

        // Every result is read, failed or not, so the pipeline ends clean; the first error is the answer.
        var outcome: Result<PostgresRows, any Error>?
        for item in queued {
            guard let result = try await nextResult() else { throw lostConnection() }
            let step = Result { try check(result) }
            while let extra = try await nextResult() { PQclear(extra) }
            switch (item, step) {
            case (.prepare(let template, let name), .success):
                preparedStatements[template] = name
            case (_, .failure):
                if case .failure = outcome {} else { outcome = step }
            case (.statement(let index), .success):
                if index == answer, case .none = outcome { outcome = step }
            }
        }
        // Then the Sync. An error in its place is the implicit COMMIT failing (a deferred
        // constraint): it is the answer if nothing failed before, and the Sync still follows.
        var ends = 0
        while true {
            guard let result = try await nextResult() else {
                // One NULL may end the failed COMMIT's results; two in a row, nothing is coming.
                ends += 1
                if ends > 1 || PQstatus(handle) != CONNECTION_OK { throw lostConnection() }
                continue
            }
            ends = 0
            if PQresultStatus(result) == PGRES_PIPELINE_SYNC {
                PQclear(result)
                break
            }
            let step = Result { try check(result) }
            if case .failure = step, case .success = outcome { outcome = step }
        }
        guard PQexitPipelineMode(handle) == 1 else { throw lostConnection() }
        return try outcome!.get()
    }

    // MARK: - Waiting

    /// The next result, once libpq has it whole; waits for the socket meanwhile.
    private func nextResult() async throws -> OpaquePointer? {
        while PQisBusy(handle) == 1 {
            try await waitForSocket(.readable)
            guard PQconsumeInput(handle) == 1 else { throw lostConnection() }
        }
        return PQgetResult(handle)
    }

    /// Sends what libpq has queued. While the socket is full it also reads, as libpq asks,
    /// so a server busy sending cannot deadlock with us.
    private func flush() async throws {
        while true {
            switch PQflush(handle) {
            case 0: return
            case 1:
                try await waitForSocket([.readable, .writable])
                guard PQconsumeInput(handle) == 1 else { throw lostConnection() }
            default: throw lostConnection()
            }
        }
    }

    private func waitForSocket(_ interest: SocketReadiness.Interest) async throws {
        let socket = PQsocket(handle)
        guard socket >= 0 else { throw lostConnection() }
        try await readiness.wait(for: socket, interest)
    }
}
