import Foundation
/// The one error type of the Postgres layer.
///
/// Server errors carry the SQLSTATE and the fields PostgreSQL reports, so callers
/// can map, say, `23505` on a named constraint to a domain error. `description`
/// stays generic on purpose: server messages and details may quote values
/// (a duplicate username, a note body), and an error printed to a log or an
/// HTTP response must not leak them. `debugDescription` (`String(reflecting:)`) is for
/// the developer: SQLSTATE, message, detail, hint, constraint and the call site of the
/// query that failed.
public struct PostgresError: Error, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// The server rejected a statement; `sqlState` says why.
        case server
        /// No connection could be opened (server down, bad credentials, bad URL).
        case connectionFailed
        /// An open connection broke while in use.
        case connectionLost
        /// Every pooled connection stayed busy for longer than the acquire timeout.
        case poolTimeout
        /// The pool is shutting down or was shut down.
        case poolClosed
        /// A column could not be decoded into the requested Swift type.
        case decoding
        /// The connection string or another setting is invalid.
        case invalidConfiguration
        /// A parameter value PostgreSQL cannot take (text with a NUL); nothing was sent.
        case invalidValue
    }

    public var kind: Kind

    /// What every call fails with once the pool is shut down.
    static var poolClosed: PostgresError {
        PostgresError(kind: .poolClosed, message: "the connection pool is shut down")
    }
    /// Five-character SQLSTATE, e.g. `23505`.
    public var sqlState: String?
    /// The server's primary message, or ours for client-side errors. May quote values.
    public var message: String
    public var detail: String?
    public var hint: String?
    public var schemaName: String?
    public var tableName: String?
    public var columnName: String?
    public var constraintName: String?
    /// Where the statement that failed was run from: the `#fileID` and `#line` of the call
    /// to a public entry point (`query`, `execute`, `withTransaction`, …); nil for errors
    /// raised outside one.
    public internal(set) var callSite: PostgresCallSite?

    public init(
        kind: Kind, sqlState: String? = nil, message: String, detail: String? = nil, hint: String? = nil,
        schemaName: String? = nil, tableName: String? = nil, columnName: String? = nil, constraintName: String? = nil
    ) {
        self.kind = kind
        self.sqlState = sqlState
        self.message = message
        self.detail = detail
        self.hint = hint
        self.schemaName = schemaName
        self.tableName = tableName
        self.columnName = columnName
        self.constraintName = constraintName
    }

    /// True for a unique violation (`23505`), optionally on one named constraint.
    public func isUniqueViolation(constraint: String? = nil) -> Bool {
        sqlState == "23505" && (constraint == nil || names(constraint!))
    }

    /// True for a foreign key violation (`23503`) on the named constraint.
    public func isForeignKeyViolation(constraint: String) -> Bool {
        sqlState == "23503" && names(constraint)
    }

    /// Whether the failed constraint is `constraint`: by its name, or on Citus, where the
    /// error comes from a shard, by the shard's copy of it (the name, `_`, the shard id).
    /// Citus passes on a worker's message but not its constraint field, so then the name
    /// is read from the message (`… constraint "name"`, as the server words it in English).
    func names(_ constraint: String) -> Bool {
        guard let name = constraintName ?? Self.quotedConstraint(in: message), name.hasPrefix(constraint) else { return false }
        let suffix = name.dropFirst(constraint.count)
        return suffix.isEmpty || (suffix.count > 1 && suffix.first == "_" && suffix.dropFirst().allSatisfy { $0.isASCII && $0.isNumber })
    }

    /// The name in `constraint "…"` of a message, if it says one.
    static func quotedConstraint(in message: String) -> String? {
        guard let start = message.range(of: "constraint \"", options: .backwards) else { return nil }
        let rest = message[start.upperBound...]
        guard let end = rest.firstIndex(of: "\"") else { return nil }
        return String(rest[..<end])
    }

    /// True when the failure means the database could not be reached or used,
    /// which the HTTP layer answers with `503` rather than `500`.
    public var isUnavailable: Bool {
        switch kind {
        case .connectionFailed, .connectionLost, .poolTimeout, .poolClosed: return true
        case .server:
            // Class 08 (connection exception), 57P01..57P03 (shutdown, cannot connect now).
            guard let state = sqlState else { return false }
            return state.hasPrefix("08") || state == "57P01" || state == "57P02" || state == "57P03"
        case .decoding, .invalidConfiguration, .invalidValue: return false
        }
    }

    /// True when the server cancelled the statement (`57014`): its task was cancelled
    /// (a request past its deadline, a client gone) or it ran past `statement_timeout`.
    public var isCancellation: Bool {
        kind == .server && sqlState == "57014"
    }

    public var description: String {
        var text = "PostgresError.\(kind)"
        if let sqlState { text += " SQLSTATE \(sqlState)" }
        if let constraintName { text += " constraint \(constraintName)" }
        if let tableName { text += " table \(tableName)" }
        if kind == .decoding || kind == .invalidConfiguration || kind == .poolTimeout || kind == .poolClosed || kind == .invalidValue {
            // Client-side messages are ours and never quote values.
            text += ": \(message)"
        }
        return text
    }

    /// Everything there is, values included: for a developer's eyes, not a client's log.
    public var debugDescription: String {
        var text = "PostgresError.\(kind)"
        if let sqlState { text += " SQLSTATE \(sqlState)" }
        text += ": \(message)"
        if let detail { text += "; detail: \(detail)" }
        if let hint { text += "; hint: \(hint)" }
        if let constraintName { text += "; constraint: \(constraintName)" }
        if let tableName {
            text += "; table: " + (schemaName.map { "\($0)." } ?? "") + tableName
        }
        if let columnName { text += "; column: \(columnName)" }
        if let callSite { text += "; at \(callSite)" }
        return text
    }

    /// The error with `callSite`, unless it already has one (the innermost call site wins).
    func at(_ site: PostgresCallSite) -> PostgresError {
        guard callSite == nil else { return self }
        var error = self
        error.callSite = site
        return error
    }
}

/// Where a query was run from: `#fileID` and `#line` of the call, captured by default
/// arguments of the public entry points. No allocation: both are static.
public struct PostgresCallSite: Sendable, CustomStringConvertible {
    public let fileID: StaticString
    public let line: UInt

    public init(fileID: StaticString, line: UInt) {
        self.fileID = fileID
        self.line = line
    }

    public var description: String { "\(fileID):\(line)" }
}

/// Runs `body`, giving a `PostgresError` it throws the call site `site`.
func attaching<T>(_ site: PostgresCallSite, _ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch let error as PostgresError {
        throw error.at(site)
    }
}
