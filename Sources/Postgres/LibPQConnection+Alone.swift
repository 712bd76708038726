import CLibPQ

extension LibPQConnection {
    /// Runs `query` in a transaction of its own with `settings` set for it
    /// (`set_config(name, value, true)`), in one round trip. Blocks.
    ///
    /// libpq's pipeline mode sends the settings' statement and `query` together,
    /// then a Sync. Without `BEGIN`, everything before a Sync is one implicit
    /// transaction, committed at the Sync, or rolled back if a statement failed;
    /// so the settings last exactly as long as `query`, as in `withTransaction`,
    /// without the `BEGIN` and `COMMIT` round trips.
    func executeAlone(_ query: PostgresQuery, settings: [(String, String)]) throws -> PostgresRows {
        try lock.withLock {
            precondition(deferredBegin == nil, "a statement alone cannot run inside a transaction")
            var statements = [query]
            if !settings.isEmpty {
                var set: PostgresQuery = "SELECT "
                for (index, (setting, value)) in settings.enumerated() {
                    set.append(index == 0 ? "" : ", ")
                    set.append("set_config(\(setting), \(value), true)")
                }
                statements.insert(set, at: 0)
            }
            // The settings' statement is the same text every time, so it is prepared too. PQprepare
            // waits for its answer, so it runs before the pipeline (once per connection and text).
            let names = try statements.map { $0.prepared ? try preparedName(for: $0.sql, query: $0) : nil }
            // A value libpq cannot send fails here, before anything is queued: a pipeline left
            // half-sent could not be ended, and the connection would have to be thrown away.
            for statement in statements { try Self.checkSendable(statement.binds) }
            guard PQenterPipelineMode(handle) == 1 else { throw lostConnection() }
            defer { _ = PQexitPipelineMode(handle) }
            for (statement, name) in zip(statements, names) {
                let sent = try withParameters(statement.binds) { count, values, lengths, formats -> Int32 in
                    if let name {
                        return PQsendQueryPrepared(handle, name, count, values, lengths, formats, 0)
                    }
                    let types = statement.binds.map { Oid($0.oid) }
                    return PQsendQueryParams(handle, statement.sql, count, types, values, lengths, formats, 0)
                }
                guard sent == 1 else { throw lostConnection() }
            }
            guard PQpipelineSync(handle) == 1 else { throw lostConnection() }
            // Every result is read, failed or not, so the pipeline ends clean; the first error is the answer.
            var outcome: Result<PostgresRows, any Error>?
            for _ in statements {
                let result = PQgetResult(handle)
                let step = Result { try check(result) }
                if result != nil { while let extra = PQgetResult(handle) { PQclear(extra) } }
                if case .failure = outcome {} else { outcome = step }
            }
            // Then the Sync. An error in its place is the implicit COMMIT failing (a deferred
            // constraint): it is the answer if nothing failed before, and the Sync still follows.
            var ends = 0
            while true {
                guard let result = PQgetResult(handle) else {
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
            return try outcome!.get()
        }
    }
}
