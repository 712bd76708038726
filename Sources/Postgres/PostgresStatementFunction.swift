/// A statement installed as a function of its own, to be called in its place. On Citus a
/// function delegated by its first argument runs whole on the worker that argument routes
/// to, as the function's owner, where the statement sent as text would be planned twice and
/// read beneath the shard's row-level policy (which keeps non-leakproof conditions such as
/// `ILIKE` and `&&` out of the indexes).
///
/// The statement stays the one definition: the body is its text with its parameters numbered
/// from `$2` (`$1` is the routing key), and the name is a fingerprint of the body, its
/// parameters' types and its planning, so a changed statement is another function and a
/// caller only ever runs, through the function, the very statement it would have sent.
public struct PostgresStatementFunction: Sendable {
    public let statement: PostgresQuery
    /// `prefix` and 16 hex digits of the fingerprint.
    public let name: String

    public init(prefix: String, statement: PostgresQuery) {
        self.statement = statement
        self.name = prefix + "_" + Self.fingerprint(body: statement.sql(numberingFrom: 2), statement: statement)
    }

    /// The statement's text, its parameters numbered after the routing key's `$1`.
    public var body: String { statement.sql(numberingFrom: 2) }

    /// The statement's parameter types, in order (the function's arguments after the key).
    public var parameterTypes: [UInt32] { statement.binds.map(\.oid) }

    /// Whether each run is planned for its values, as an unprepared statement is.
    public var plansEachRun: Bool { !statement.prepared }

    /// `SELECT * FROM name(key, …the statement's values)`: the statement's rows.
    public func call(routedBy key: Int64) -> PostgresQuery {
        var call: PostgresQuery = "SELECT * FROM \(identifier: name)(\(key)"
        for bind in statement.binds {
            call.append(", ")
            call.append(bind: bind)
        }
        call.append(")")
        return call
    }

    /// FNV-1a (64 bits) over the body, the parameter types and the planning: stable across
    /// processes and builds (Swift's `Hasher` is seeded per process), and a few dozen shapes
    /// are far from colliding.
    static func fingerprint(body: String, statement: PostgresQuery) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ byte: UInt8) {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        body.utf8.forEach(mix)
        for bind in statement.binds {
            mix(0)
            withUnsafeBytes(of: bind.oid.bigEndian) { $0.forEach(mix) }
        }
        mix(statement.prepared ? 1 : 2)
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
