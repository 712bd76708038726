import Postgres

extension NoteStore {
    /// Runs a page of a list as the caller's tenant (in its transaction, or as pipelined reads).
    func page(_ list: NoteList, tenantID: Int64, viewerID: Int64, on connection: some PostgresQuerying) async throws -> NotePage {
        var list = list
        list.filters = try await resolvingUsernames(list.filters, tenantID: tenantID, on: connection)
        let statement = try await workerReads.statement(
            Self.statement(list, tenantID: tenantID, viewerID: viewerID), for: list.filters, tenantID: tenantID, on: connection)
        let rows = try await connection.query(statement)
        return try Self.page(list, from: rows, viewerID: viewerID)
    }

    /// Cuts the page from the rows of `statement` (sent as it is, or through its function on Citus).
    static func page(_ list: NoteList, from rows: PostgresRows, viewerID: Int64) throws -> NotePage {
        try list.page.page(from: rows, keyColumn: Self.noteColumnCount) { row, distance in
            var note = try Self.note(from: row, viewer: viewerID)
            note.distanceM = distance
            return (note, note.id)
        }
    }

    /// The page statement: `limit + 1` rows so the caller learns whether more follow.
    static func statement(_ list: NoteList, tenantID: Int64, viewerID: Int64) -> PostgresQuery {
        let filters = list.filters
        var query = filters.near.map { nearestStatement(list, from: $0, tenantID: tenantID, viewerID: viewerID) }
            ?? newestStatement(list, tenantID: tenantID, viewerID: viewerID)
        query.prepared = filters.isPlannedOnce
        return query
    }
}
