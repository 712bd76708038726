import Postgres

/// Clusters from the pre-aggregated grid (migration 0014): the cells the box touches, at
/// the request's zoom, plus the deltas not folded yet and the caller's own private notes,
/// less what `Audience` hides from the caller (migration 0029): their own hidden cells (the
/// authors they block, who block them, or they reported, summed per viewer), the cells of
/// accounts held for a moderator on the author grid, those authors' unfolded deltas, and the
/// few other public notes in the box it hides (held, reported by them) one by one. Summed per
/// cell in one statement (one snapshot, so exact at every moment). The held accounts' cells are
/// read per account (`LATERAL … OFFSET 0`, which the planner cannot turn around): joined, a
/// plan made while the author grid looked empty read every author's cells in the box through
/// the key's tenant prefix, 4 to 9 ms a request at 1,000,000 notes (bench/results/2026-11-27-full-blocks.md). Reading the hidden
/// authors' notes instead cost 5 to 7 times the grid's read for 50 blocks of busy authors;
/// their per-author cells, 0.72 to 0.84 of the rate (bench/results/2026-11-27-quick-blocks-*).
extension NoteStore {
    /// The highest zoom the grid keeps; above it a screen holds few enough notes to group live.
    static let gridMaxZoom = 17

    /// Whether the grid answers this request: the box alone (a search, an author or a
    /// place is answered live), at a zoom the grid keeps.
    static func gridAnswers(_ clusters: NoteClusters) -> Bool {
        let filters = clusters.filters
        return clusters.zoom <= gridMaxZoom && filters.search == nil && filters.author == nil && filters.placeID == nil
            && filters.near == nil
    }

    /// The grid's cells a box touches: a row range and one or two column ranges.
    struct CellRanges: Sendable, Equatable {
        let rows: ClosedRange<Int>
        let columns: [ClosedRange<Int>]

        init(_ box: BoundingBox, gridSize: Int) {
            let top = Int((NoteClusters.mercatorY(box.maxLat) * Double(gridSize)).rounded(.down))
            let bottom = Int((NoteClusters.mercatorY(box.minLat) * Double(gridSize)).rounded(.down))
            rows = min(top, gridSize - 1)...min(bottom, gridSize - 1)
            let column = { (lng: Double) in
                min(max(Int(((lng + 180) / 360 * Double(gridSize)).rounded(.down)), 0), gridSize - 1)
            }
            // The grid's formula wraps 180° onto column 0, where -180° is: a range reaching
            // 180° takes that column too.
            columns = box.longitudeRanges.map { column($0.0)...column($0.1) }
                + (box.longitudeRanges.contains { $0.1 >= 180 } ? [0...0] : [])
        }

        /// `y BETWEEN … AND (x BETWEEN … OR …)` over the columns named `x` and `y`.
        var condition: PostgresQuery { condition(x: "x", y: "y") }

        func condition(x: PostgresQuery, y: PostgresQuery) -> PostgresQuery {
            let ranges = columns.map { range -> PostgresQuery in
                "\(x) BETWEEN \(Int32(range.lowerBound)) AND \(Int32(range.upperBound))"
            }
            return "\(y) BETWEEN \(Int32(rows.lowerBound)) AND \(Int32(rows.upperBound)) AND (\(ranges.joined(separator: " OR ")))"
        }
    }

    static func gridStatement(_ clusters: NoteClusters, tenantID: Int64, viewerID: Int64) -> PostgresQuery {
        let size = clusters.gridSize
        let cells = CellRanges(clusters.bbox, gridSize: size)
        let hidden = Audience.hiddenUsers(tenantID: tenantID, viewerID: viewerID)
        var query: PostgresQuery = """
            SELECT sum(sum_lat7)::float8 / sum(count) / 1e7, sum(sum_lng7)::float8 / sum(count) / 1e7, sum(count)::int8,
                   CASE WHEN sum(count) = 1 THEN sum(sum_id)::int8 END
            FROM (
                SELECT x, y, count, sum_id, sum_lat7, sum_lng7 FROM note_grid_cells
                WHERE tenant_id = \(tenantID) AND zoom = \(clusters.zoom) AND \(cells.condition)
                UNION ALL
                SELECT grid_x(lng, \(Int32(size))), grid_y(lat, \(Int32(size))), delta, delta * note_id,
                       delta * round(lat * 1e7)::int8, delta * round(lng * 1e7)::int8
                FROM note_grid_deltas WHERE tenant_id = \(tenantID)
                UNION ALL
                SELECT grid_x(ST_X(location::geometry), \(Int32(size))), grid_y(ST_Y(location::geometry), \(Int32(size))), 1, id,
                       round(ST_Y(location::geometry) * 1e7)::int8, round(ST_X(location::geometry) * 1e7)::int8
                FROM notes WHERE tenant_id = \(tenantID) AND user_id = \(viewerID) AND visibility = 'private'
                UNION ALL
                SELECT x, y, -count, -sum_id, -sum_lat7, -sum_lng7 FROM viewer_hidden_cells
                WHERE tenant_id = \(tenantID) AND viewer_id = \(viewerID) AND zoom = \(clusters.zoom) AND \(cells.condition)
                UNION ALL
                SELECT a.x, a.y, -a.count, -a.sum_id, -a.sum_lat7, -a.sum_lng7
                FROM unnest(ARRAY(\(Audience.heldUsers(tenantID: tenantID, viewerID: viewerID))
                                  EXCEPT \(Audience.hiddenByViewer(tenantID: tenantID, viewerID: viewerID)))) AS held(id),
                     LATERAL (SELECT * FROM author_grid_cells c
                              WHERE c.tenant_id = \(tenantID) AND c.user_id = held.id AND c.zoom = \(clusters.zoom)
                                AND \(cells.condition(x: "c.x", y: "c.y"))
                              OFFSET 0) a
                UNION ALL
                SELECT grid_x(lng, \(Int32(size))), grid_y(lat, \(Int32(size))), -delta, -delta * note_id,
                       -delta * round(lat * 1e7)::int8, -delta * round(lng * 1e7)::int8
                FROM note_grid_deltas WHERE tenant_id = \(tenantID) AND user_id = ANY (ARRAY\(hidden))
                UNION ALL
                SELECT grid_x(ST_X(n.location::geometry), \(Int32(size))), grid_y(ST_Y(n.location::geometry), \(Int32(size))),
                       -1, -n.id, -round(ST_Y(n.location::geometry) * 1e7)::int8, -round(ST_X(n.location::geometry) * 1e7)::int8
                FROM notes n
                WHERE n.tenant_id = \(tenantID) AND n.visibility = 'public' AND NOT n.author_disabled
                  AND \(clusters.bbox.condition(location: "n.location::geometry"))
                  AND (n.moderation IS NOT NULL OR n.id = ANY (ARRAY(\(Audience.reported("note", tenantID: tenantID, viewerID: viewerID)))))
                  AND NOT (n.user_id = ANY (ARRAY\(hidden)))
                  AND NOT (\(Audience.seesNote("n", tenantID: tenantID, viewerID: viewerID)))
            ) cell
            WHERE \(cells.condition)
            GROUP BY x, y
            HAVING sum(count) > 0
            ORDER BY sum(count) DESC, CASE WHEN sum(count) = 1 THEN sum(sum_id) END, x, y
            """
        // Every value a parameter, so the text repeats and each connection plans it once:
        // planning this UNION costs more than running it (1.2-1.7 ms against ~0.2 ms).
        query.prepared = true
        return query
    }
}
