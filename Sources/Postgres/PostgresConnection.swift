import Logging

/// A connection lent by the pool. Its calls send from the calling task and suspend while
/// the server works (libpq's non-blocking mode), so they never block a thread.
public struct PostgresConnection: Sendable {
    let handle: LibPQConnection
    /// The borrower's logger (`PostgresPool.withConnection(logger:)`): a request's carries its id.
    public let logger: Logger

    /// Runs one statement with bound parameters; `query(_:)` (from `PostgresQuerying`)
    /// passes its caller's `#fileID` and `#line`, which an error it throws carries.
    @discardableResult
    public func query(_ query: PostgresQuery, at callSite: PostgresCallSite) async throws -> PostgresRows {
        try await logged(callSite) { try await handle.execute(query) }
    }

    /// `query` behind `check`, in one pipeline (see `PostgresQuerying.query(_:after:at:)`).
    @discardableResult
    public func query(_ query: PostgresQuery, after check: PostgresQuery, at callSite: PostgresCallSite) async throws -> PostgresRows {
        try await logged(callSite) { try await handle.execute(query, after: [check]) }
    }

    /// Runs a statement with the call site attached to its error, and says on the borrower's
    /// logger what failed (at `debug`: whether it matters is the caller's call) and, at
    /// `trace`, every statement with its duration.
    func logged(_ callSite: PostgresCallSite, _ body: () async throws -> PostgresRows) async throws -> PostgresRows {
        let started = ContinuousClock.now
        do {
            let rows = try await attaching(callSite, body)
            logger.trace("statement", metadata: ["site": "\(callSite)", "duration": "\(ContinuousClock.now - started)"])
            return rows
        } catch let error as PostgresError {
            logger.debug("statement failed", metadata: ["error": .string(String(reflecting: error))])
            throw error
        }
    }

    /// `query` as one implicit transaction with `settings`, pipelined with the `set_config`
    /// that sets them: one round trip (see `PostgresPool.query(_:settings:)`).
    func queryInImplicitTransaction(
        _ query: PostgresQuery, after checks: [PostgresQuery] = [], settings: [(String, String)]
    ) async throws -> PostgresRows {
        try await handle.executeInImplicitTransaction(query, after: checks, settings: settings)
    }

    /// Runs parameterless SQL text, possibly several statements (`BEGIN`, `SET LOCAL …`).
    /// Only program text: a `StaticString` cannot hold input.
    @discardableResult
    public func execute(
        unsafeSQL sql: StaticString, fileID: StaticString = #fileID, line: UInt = #line
    ) async throws -> PostgresRows {
        try await execute(script: sql.description, at: PostgresCallSite(fileID: fileID, line: line))
    }

    /// Runs SQL text read at run time (a migration file's): for the migrator only.
    func execute(script sql: String, at callSite: PostgresCallSite) async throws -> PostgresRows {
        try await logged(callSite) { try await handle.execute(simple: sql) }
    }

    /// Where a transaction's last statement runs: with its `COMMIT` in the same pipeline, one
    /// round trip instead of two (`PostgresFinalStatement`).
    public var committing: PostgresFinalStatement { PostgresFinalStatement(connection: self) }

    /// Commits or rolls back the transaction `PostgresPool.withTransaction` opened;
    /// free when it never reached the server (the body ran no statement).
    func endTransaction(commit: Bool) async throws {
        try await handle.endTransaction(commit: commit)
    }
}

/// What statements run on: a connection lent inside a transaction, or
/// `PostgresPool.withPipelinedReads(settings:_:)`, where each statement is one pipelined
/// implicit transaction of its own. Code that only reads can take either.
///
/// Call `query(_:)`; conformers implement `query(_:at:)`, and the call site the extension
/// captures goes into any `PostgresError` thrown.
public protocol PostgresQuerying: Sendable {
    @discardableResult
    func query(_ query: PostgresQuery, at callSite: PostgresCallSite) async throws -> PostgresRows

    /// Runs `check`, then `query` in the same transaction, and returns `query`'s rows; an
    /// error `check` raises is the call's, and `query` does not run. A check that raises
    /// unless a condition holds makes the statement after it conditional without a round
    /// trip of its own: the connection's conformers send both in one pipeline.
    @discardableResult
    func query(_ query: PostgresQuery, after check: PostgresQuery, at callSite: PostgresCallSite) async throws -> PostgresRows
}

extension PostgresQuerying {
    /// One statement after the other: what a conformer that cannot pipeline them does.
    @discardableResult
    public func query(_ query: PostgresQuery, after check: PostgresQuery, at callSite: PostgresCallSite) async throws -> PostgresRows {
        try await self.query(check, at: callSite)
        return try await self.query(query, at: callSite)
    }

    /// Where every statement runs behind `check` (`query(_:after:at:)`): for a store's write
    /// that must happen only while what the caller checks still holds.
    public func checked(by check: PostgresQuery) -> PostgresChecked {
        PostgresChecked(base: self, check: check)
    }
}

/// Statements that each run behind a check, in one pipeline with it (`PostgresQuerying.checked(by:)`).
public struct PostgresChecked: PostgresQuerying {
    let base: any PostgresQuerying
    let check: PostgresQuery

    @discardableResult
    public func query(_ query: PostgresQuery, at callSite: PostgresCallSite) async throws -> PostgresRows {
        try await base.query(query, after: check, at: callSite)
    }
}

extension PostgresQuerying {
    /// Runs one statement; an error it throws carries this call's `#fileID` and `#line`.
    @discardableResult
    public func query(
        _ query: PostgresQuery, fileID: StaticString = #fileID, line: UInt = #line
    ) async throws -> PostgresRows {
        try await self.query(query, at: PostgresCallSite(fileID: fileID, line: line))
    }
}

extension PostgresConnection: PostgresQuerying {}

/// The last statement of a `PostgresPool.withTransaction` body, sent with the transaction's
/// `COMMIT` in one pipeline: a write that is `BEGIN`, settings, the statement and `COMMIT` is one
/// round trip. Its rows are returned once the transaction has committed. One statement only: a
/// second on the same transaction is a programming error (a precondition), and a statement that
/// fails leaves the transaction to be rolled back as any failure does.
public struct PostgresFinalStatement: PostgresQuerying {
    let connection: PostgresConnection

    @discardableResult
    public func query(_ query: PostgresQuery, at callSite: PostgresCallSite) async throws -> PostgresRows {
        try await connection.logged(callSite) { try await connection.handle.executeCommitting(query) }
    }

    @discardableResult
    public func query(_ query: PostgresQuery, after check: PostgresQuery, at callSite: PostgresCallSite) async throws -> PostgresRows {
        try await connection.logged(callSite) { try await connection.handle.executeCommitting(query, after: [check]) }
    }
}

/// A lent connection on which each statement runs as one implicit transaction, pipelined
/// with the `set_config` of the same settings (`PostgresPool.query(_:settings:)`: one round
/// trip each). Statements do not share a snapshot: for reads that need not.
public struct PostgresPipelinedReads: PostgresQuerying {
    let connection: PostgresConnection
    let settings: [(String, String)]

    @discardableResult
    public func query(_ query: PostgresQuery, at callSite: PostgresCallSite) async throws -> PostgresRows {
        try await connection.logged(callSite) { try await connection.queryInImplicitTransaction(query, settings: settings) }
    }

    @discardableResult
    public func query(_ query: PostgresQuery, after check: PostgresQuery, at callSite: PostgresCallSite) async throws -> PostgresRows {
        try await connection.logged(callSite) { try await connection.queryInImplicitTransaction(query, after: [check], settings: settings) }
    }
}

extension PostgresPool {
    /// Lends one connection to `body`, on which each statement is one implicit transaction
    /// with these settings, sent in one pipeline with their `set_config` (one round trip):
    /// for reads whose statements need not share a snapshot. One connection for all of them,
    /// so a request queues for the pool once, not per statement.
    public func withPipelinedReads<T: Sendable>(
        settings: [(String, String)], logger: Logger? = nil, fileID: StaticString = #fileID, line: UInt = #line,
        _ body: (PostgresPipelinedReads) async throws -> T
    ) async throws -> T {
        try await withConnection(logger: logger, fileID: fileID, line: line) {
            try await body(PostgresPipelinedReads(connection: $0, settings: settings))
        }
    }
}
