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
    func execute(_ query: PostgresQuery) async throws -> PostgresRows {
        if deferredBegin == nil, PQtransactionStatus(handle) == PQTRANS_IDLE, let set = settingsStatement([]) {
            // A statement outside any transaction is one implicit transaction up to the
            // Sync: the statement settings (the timeout) go in it.
            return try await runPipeline([set, query])
        }
        return try await runPipeline(takeDeferredBegin() + [query])
    }

    /// Runs `query` as one implicit transaction with `settings` set for it
    /// (`set_config(name, value, true)`), both in one pipeline: one round trip.
    ///
    /// Without `BEGIN`, everything before a Sync is one implicit transaction, committed at the
    /// Sync, or rolled back if a statement failed; so the settings last exactly as long as
    /// `query`, as in `withTransaction`, without the `BEGIN` and `COMMIT` round trips.
    func executeInImplicitTransaction(_ query: PostgresQuery, settings: [(String, String)]) async throws -> PostgresRows {
        precondition(deferredBegin == nil, "an implicit transaction cannot run inside a transaction")
        if let set = settingsStatement(settings) {
            return try await runPipeline([set, query])
        }
        return try await runPipeline([query])
    }

    /// Ends the transaction: nothing to send when it never reached the server.
    func endTransaction(commit: Bool) async throws {
        if deferredBegin != nil {
            deferredBegin = nil
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
        let begin = takeDeferredBegin()
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

    /// The deferred `BEGIN` and its settings' statement, to send ahead of the next statement;
    /// none when no transaction waits to start.
    private func takeDeferredBegin() -> [PostgresQuery] {
        guard let settings = deferredBegin else { return [] }
        deferredBegin = nil
        return ["BEGIN"] + (settingsStatement(settings).map { [$0] } ?? [])
    }

    /// `SELECT set_config($1, $2, true), …` for the connection's statement settings and
    /// `settings`: the same text for the same setting names, so it is prepared once per
    /// connection like any statement.
    func settingsStatement(_ settings: [(String, String)]) -> PostgresQuery? {
        let settings = statementSettings + settings
        guard !settings.isEmpty else { return nil }
        var set: PostgresQuery = "SELECT "
        for (index, (setting, value)) in settings.enumerated() {
            set.append(index == 0 ? "" : ", ")
            set.append("set_config(\(setting), \(value), true)")
        }
        return set
    }

    // MARK: - The pipeline

    /// What one queued command's result is for.
    private enum Queued {
        /// Preparing `sql` as `name`: remembered once the server accepted it.
        case prepare(sql: String, name: String)
        case statement
    }

    /// Sends `statements` in one pipeline ended by a Sync, preparing those not prepared yet in
    /// the same pipeline, and reads every result: the last statement's rows, or the first error.
    /// When `cancellable`, a cancelled task sends nothing, and a task cancelled meanwhile
    /// cancels the statements on the server (`cancellable(_:)`).
    func runPipeline(_ statements: [PostgresQuery], cancellable isCancellable: Bool = true) async throws -> PostgresRows {
        guard isCancellable else { return try await sendAndReadPipeline(statements) }
        try Task.checkCancellation()
        return try await cancellable { try await sendAndReadPipeline(statements) }
    }

    private func sendAndReadPipeline(_ statements: [PostgresQuery]) async throws -> PostgresRows {
        // A value libpq cannot send fails here, before anything is queued: a pipeline left
        // half-sent could not be ended, and the connection would have to be thrown away.
        for statement in statements { try Self.checkSendable(statement.binds) }
        guard PQenterPipelineMode(handle) == 1 else { throw lostConnection() }
        var queued: [Queued] = []
        var preparing: [String: String] = [:]
        for statement in statements {
            let sql = statement.sql
            var name = statement.prepared ? (preparedStatements[sql] ?? preparing[sql]) : nil
            if statement.prepared, name == nil, preparedStatements.count + preparing.count < Self.preparedStatementLimit {
                let fresh = "lr\(nextStatementNumber)"
                nextStatementNumber += 1
                let types = statement.binds.map { Oid($0.oid) }
                guard PQsendPrepare(handle, fresh, sql, Int32(types.count), types) == 1 else { throw lostConnection() }
                queued.append(.prepare(sql: sql, name: fresh))
                preparing[sql] = fresh
                name = fresh
            }
            let sent = try withParameters(statement.binds) { count, values, lengths, formats -> Int32 in
                // Results in binary (resultFormat 1): fixed-width numbers and timestamps need no
                // parsing, and no calendar code (PostgresDecodable.swift).
                if let name {
                    return PQsendQueryPrepared(handle, name, count, values, lengths, formats, 1)
                }
                let types = statement.binds.map { Oid($0.oid) }
                return PQsendQueryParams(handle, sql, count, types, values, lengths, formats, 1)
            }
            guard sent == 1 else { throw lostConnection() }
            queued.append(.statement)
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
            case (.prepare(let sql, let name), .success):
                preparedStatements[sql] = name
            case (_, .failure):
                if case .failure = outcome {} else { outcome = step }
            case (.statement, .success):
                if case .failure = outcome {} else { outcome = step }
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
