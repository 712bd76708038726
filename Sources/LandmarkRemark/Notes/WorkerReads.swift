import Logging
import Postgres
import Synchronization

/// On Citus, the list shapes that read on the tenant's worker: each is the very statement
/// `NoteStore.statement` builds, installed by `landmark-remark distribute` as a function of
/// its own (`PostgresStatementFunction`, migration 0022) delegated to the tenant's worker,
/// where it reads as its owner through the indexes. Routed as text, the statement would read
/// beneath the shard's row-level policy, which keeps `ST_DWithin` and `LIKE` out of the
/// indexes (an unfiltered nearest page read every note of the shard, 148 ms at 100,000
/// notes; a rare word 103 ms).
///
/// Which functions are installed is learnt from the database and learnt again every
/// `relearnAfter`, so replicas pick up a `distribute` without a restart. A shape whose
/// function is missing (a replica newer than the last `distribute`) runs as a statement,
/// and says so once.
final class WorkerReads: Sendable {
    /// The names of the functions: `notes_read_` and the statement's fingerprint.
    static let prefix = "notes_read"
    static let relearnAfter = Duration.seconds(30)

    private struct Known {
        var names: Set<String>
        var learnt: ContinuousClock.Instant
        var reportedMissing: Set<String> = []
    }

    private let known = Mutex<Known?>(nil)
    private let logger = Logger(label: "landmark-remark.notes")

    /// The lists that read on the worker: nearest first with nothing the KNN walk cannot
    /// use, and a text search (in bodies, or bodies and names) with no other filter. Others
    /// filter through indexes the policy leaves usable, or too many combinations to install.
    static func readOnWorker(_ filters: NoteFilters) -> Bool {
        if filters.near != nil { return !filters.narrowsNearest }
        return filters.searchesText && filters.bbox == nil && filters.author == nil && filters.placeID == nil
    }

    /// Every statement of those lists, one per shape (its text, parameter types and planning):
    /// what `distribute` installs. The values are placeholders; only the shape counts.
    static func statements() throws -> [PostgresQuery] {
        // A word and a phrase search differently (NoteStore.newestStatement), and two
        // characters through their bigrams (SearchText.matches).
        // A circle across the antimeridian walks the geography index (PlanarWalk).
        var shapes = ["near=0,0", "near=0,0&radius_m=1", "near=0,180&radius_m=1"]
        for text in ["word", "two%20words", "ab", "ab%20cd"] {
            shapes += ["q=\(text)&in=body", "q=\(text)&in=all"]
        }
        var statements: [PostgresQuery] = []
        for shape in shapes {
            for resumed in [false, true] {
                let authors: [NoteFilters.Authors?] = shape.hasSuffix("in=all") ? [.ids([]), .ids([1]), .many] : [nil]
                for namesFound in authors {
                    var list = try list(shape, resumed: resumed)
                    list.filters.search?.authors = namesFound
                    statements.append(NoteStore.statement(list, tenantID: 0, viewerID: 0))
                }
            }
        }
        // Bodies alone and bodies with no name found are the same statement.
        var seen = Set<String>()
        return statements.filter { seen.insert(PostgresStatementFunction(prefix: prefix, statement: $0).name).inserted }
    }

    private static func list(_ query: String, resumed: Bool) throws -> NoteList {
        var parameters = try QueryParameters(query: query)
        let list = try NoteList(&parameters)
        guard resumed else { return list }
        let key: KeysetCursor.Key = list.filters.near != nil ? .nearest(distance: 1, id: 1) : .newest(createdMicros: 1, id: 1)
        let cursor = KeysetCursor(key: key).encoded(fingerprint: list.page.fingerprint)
        var withCursor = try QueryParameters(query: query + "&cursor=" + cursor)
        return try NoteList(&withCursor)
    }

    /// `statement` as it should be sent: the call of its function where one is installed.
    func statement(
        _ statement: PostgresQuery, for filters: NoteFilters, tenantID: Int64, on connection: some PostgresQuerying
    ) async throws -> PostgresQuery {
        guard Self.readOnWorker(filters) else { return statement }
        let names = try await installed(on: connection)
        guard !names.isEmpty else { return statement }
        let function = PostgresStatementFunction(prefix: Self.prefix, statement: statement)
        if names.contains(function.name) { return function.call(routedBy: tenantID) }
        let first = known.withLock { $0?.reportedMissing.insert(function.name).inserted ?? false }
        if first {
            logger.warning(
                "a list statement has no function on the workers and runs as a statement: run landmark-remark distribute",
                metadata: ["function": "\(function.name)"])
        }
        return statement
    }

    /// The functions installed and delegated (none off Citus), learnt at most every `relearnAfter`.
    private func installed(on connection: some PostgresQuerying) async throws -> Set<String> {
        let now = ContinuousClock.now
        if let known = known.withLock({ $0 }), now - known.learnt < Self.relearnAfter { return known.names }
        let names = Set(try await connection.query("SELECT statement_functions()").map { try $0.decode(String.self, column: 0) })
        known.withLock { known in
            known = Known(names: names, learnt: now, reportedMissing: known?.reportedMissing ?? [])
        }
        return names
    }
}
