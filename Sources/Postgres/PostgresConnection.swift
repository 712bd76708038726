/// A connection lent by the pool. Its calls send from the calling task and suspend while
/// the server works (libpq's non-blocking mode), so they never block a thread.
public struct PostgresConnection: Sendable {
    let handle: LibPQConnection

    /// Runs one statement with bound parameters.
    @discardableResult
    public func query(_ query: PostgresQuery) async throws -> PostgresRows {
        try await handle.execute(query)
    }

    /// `query` in a transaction of its own with `settings` (see `PostgresPool.query(_:settings:)`).
    func queryAlone(_ query: PostgresQuery, settings: [(String, String)]) async throws -> PostgresRows {
        try await handle.executeAlone(query, settings: settings)
    }

    /// Runs parameterless SQL text, possibly several statements (migrations, `BEGIN`).
    /// Never pass input here.
    @discardableResult
    public func execute(unsafeSQL sql: String) async throws -> PostgresRows {
        try await handle.execute(simple: sql)
    }

    /// Commits or rolls back the transaction `PostgresPool.withTransaction` opened;
    /// free when it never reached the server (the body ran no statement).
    func endTransaction(commit: Bool) async throws {
        try await handle.endTransaction(commit: commit)
    }
}

/// What statements run on: a connection lent inside a transaction, or
/// `PostgresPool.withStatementsAlone(settings:_:)`, where each statement is a transaction
/// of its own. Code that only reads can take either.
public protocol PostgresQuerying: Sendable {
    @discardableResult
    func query(_ query: PostgresQuery) async throws -> PostgresRows
}

extension PostgresConnection: PostgresQuerying {}

/// A lent connection on which each statement runs in a transaction of its own with the
/// same settings (`PostgresPool.query(_:settings:)`: one round trip each).
public struct PostgresStatementsAlone: PostgresQuerying {
    let connection: PostgresConnection
    let settings: [(String, String)]

    @discardableResult
    public func query(_ query: PostgresQuery) async throws -> PostgresRows {
        try await connection.queryAlone(query, settings: settings)
    }
}

extension PostgresPool {
    /// Lends one connection to `body`, on which each statement is a transaction of its own
    /// with these settings: for reads whose statements need not share a snapshot. One
    /// connection for all of them, so a request queues for the pool once, not per statement.
    public func withStatementsAlone<T: Sendable>(
        settings: [(String, String)], _ body: (PostgresStatementsAlone) async throws -> T
    ) async throws -> T {
        try await withConnection { try await body(PostgresStatementsAlone(connection: $0, settings: settings)) }
    }
}
