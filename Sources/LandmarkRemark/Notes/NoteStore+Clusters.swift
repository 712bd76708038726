import Postgres

extension NoteStore {
    /// Runs a cluster request as the caller's tenant (in its transaction, or as pipelined reads).
    func clusters(_ request: NoteClusters, tenantID: Int64, viewerID: Int64, on connection: some PostgresQuerying) async throws -> ClusterList {
        var request = request
        request.filters = try await resolvingUsernames(request.filters, tenantID: tenantID, on: connection)
        let statement = Self.gridAnswers(request)
            ? Self.gridStatement(request, tenantID: tenantID, viewerID: viewerID)
            : Self.statement(request, tenantID: tenantID, viewerID: viewerID)
        let rows = try await connection.query(statement)
        let clusters = try rows.map { row in
            let (lat, lng, count, noteID) = try row.decode((Double, Double, Int, Int64?).self)
            return Cluster(lat: lat, lng: lng, count: count, noteID: noteID)
        }
        return ClusterList(clusters: clusters)
    }

    /// One statement: the viewport's visible notes (through the same filters and
    /// indexes as the list), each given its grid cell by `grid_x` and `grid_y` (migrations
    /// 0014 and 0021: the tile formula, which the pre-aggregated grid uses too; both inline),
    /// grouped. A cluster sits at the mean position of its notes (a cell never spans the
    /// antimeridian, so the mean longitude is meaningful).
    static func statement(_ clusters: NoteClusters, tenantID: Int64, viewerID: Int64) -> PostgresQuery {
        let (filters, size) = (clusters.filters, Int32(clusters.gridSize))
        var query: PostgresQuery = """
            SELECT avg(lat), avg(lng), count(*)::int8, CASE WHEN count(*) = 1 THEN min(id) END
            FROM (
                SELECT n.id, ST_Y(n.location::geometry) AS lat, ST_X(n.location::geometry) AS lng
                FROM tenant_notes n
                WHERE \(Self.condition(filters, tenantID: tenantID, viewerID: viewerID, reading: .throughIndex))
            ) visible
            GROUP BY grid_x(lng, \(size)), grid_y(lat, \(size))
            ORDER BY count(*) DESC, min(id)
            """
        query.prepared = !filters.needsCustomPlan
        return query
    }
}
