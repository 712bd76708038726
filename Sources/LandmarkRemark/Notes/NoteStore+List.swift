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
        // A walking newest-first page decides between its plans as it runs, so one plan fits
        // every pattern and planning it once per connection saves ~2 ms a search. Authors
        // matched by name are the exception: PostgreSQL hashes `user_id = ANY(ids)` only when
        // the array is known at planning (500 ids, compared one by one on every walked row,
        // cost 8.3 ms a page against 5.7 ms planned each time; bench/results/2026-11-23-search.md).
        // Words in a box are the exception too: whether the box's index or the word's finds
        // the rare matches cheaper depends on both, and the one plan that fits a busy tenant's
        // box took the spatial index for a rare word in London (740 ms a page at ten million
        // notes, 42 ms planned for the values; bench/results/2026-11-24-performance.md).
        if filters.near == nil && filters.walksNewestFirst {
            query.prepared = (filters.search?.userIDs ?? []).isEmpty && !(filters.searchesText && filters.bbox != nil)
        } else {
            query.prepared = !filters.needsCustomPlan
        }
        return query
    }
}
