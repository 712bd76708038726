import Postgres

extension NoteStore {
    /// Runs a cluster request as the caller's tenant (in its transaction, or as pipelined reads).
    func clusters(_ request: NoteClusters, tenantID: Int64, viewerID: Int64, on connection: some PostgresQuerying) async throws -> NoteClusters.Response {
        var request = request
        request.filters = try await resolvingUsernames(request.filters, tenantID: tenantID, on: connection)
        let statement = Self.gridAnswers(request)
            ? Self.gridStatement(request, tenantID: tenantID, viewerID: viewerID)
            : Self.statement(request, tenantID: tenantID, viewerID: viewerID)
        let rows = try await connection.query(statement)
        let clusters = try rows.map { row in
            let (lat, lng, count, noteID) = try row.decode((Double, Double, Int, Int64?).self)
            return NoteClusters.Cluster(lat: lat, lng: lng, count: count, noteID: noteID)
        }
        return NoteClusters.Response(clusters: clusters)
    }

    /// One statement: the viewport's visible notes (through the same filters and
    /// indexes as the list), each given its grid cell by the tile formula, grouped.
    /// `cell_x` wraps 180° onto -180°, the same meridian; `cell_y` uses Mercator
    /// y = (1 - asinh(tan φ) / π) / 2 with φ clamped to the projection's limit.
    /// A cluster sits at the mean position of its notes (a cell never spans the
    /// antimeridian, so the mean longitude is meaningful).
    static func statement(_ clusters: NoteClusters, tenantID: Int64, viewerID: Int64) -> PostgresQuery {
        let (filters, gridSize, mercatorLimit) = (clusters.filters, clusters.gridSize, NoteClusters.mercatorLimit)
        var query: PostgresQuery = """
            SELECT avg(lat), avg(lng), count(*)::int8, CASE WHEN count(*) = 1 THEN min(id) END
            FROM (
                SELECT n.id, ST_Y(n.location::geometry) AS lat, ST_X(n.location::geometry) AS lng
                FROM tenant_notes n
                WHERE \(Self.condition(filters, tenantID: tenantID, viewerID: viewerID))
            ) visible
            GROUP BY
                mod(floor((lng + 180) / 360 * \(gridSize))::int8, \(gridSize)),
                least(floor((1 - asinh(tan(radians(greatest(-\(mercatorLimit), least(\(mercatorLimit), lat))))) / pi())
                            / 2 * \(gridSize))::int8, \(gridSize) - 1)
            ORDER BY count(*) DESC, min(id)
            """
        query.prepared = !filters.needsCustomPlan
        return query
    }
}
