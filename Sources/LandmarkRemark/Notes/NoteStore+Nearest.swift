import Postgres

extension NoteStore {
    /// Nearest first, in exact spheroid order (`ExactNearest`), the authors joined to the
    /// page's rows only. On Citus the unfiltered page runs on the tenant's worker, as a
    /// function whose body is this statement (`WorkerReads`).
    static func nearestStatement(_ list: NoteList, from point: GeoPoint, tenantID: Int64, viewerID: Int64) -> PostgresQuery {
        let (filters, limit) = (list.filters, list.limit)
        let origin = point.geography
        let keyset = ExactNearest.keyset("n", origin: origin, after: list.cursor?.key)
        let condition = Self.condition(filters, tenantID: tenantID, viewerID: viewerID, reading: .walk)
        if filters.narrowsNearest {
            return filteredNearestStatement(list, origin: origin, keyset: keyset, condition: condition, tenantID: tenantID, viewerID: viewerID)
        }
        let planar = PlanarWalk(near: point, radius: filters.radius).map { walk in
            ExactNearest.Planar(walk: walk, condition: Self.condition(
                filters, tenantID: tenantID, viewerID: viewerID, reading: .throughFilterIndex) + keyset, tenantID: tenantID)
        }
        return """
            \(ExactNearest.page(of: "tenant_notes", as: "n", where: condition + keyset, origin: origin, limit: limit, planar: planar))
            SELECT \(Self.noteColumns), n.distance
            FROM page n
            JOIN tenant_users u ON u.tenant_id = \(tenantID) AND u.id = n.user_id
            ORDER BY n.distance, n.id
            """
    }

    /// How many nearest notes a filtered nearest page looks through before it sorts every match instead.
    static let nearestWalk = 500

    /// Nearest first with a filter the KNN walk cannot use (text, author, viewport, place).
    ///
    /// Walking nearest first and filtering finds a common word at once, but for a rare
    /// word, or one author's notes, it walks every note in range (1.9 s for `axolotl`
    /// within 10 km of London). So `walk` looks at no more than the `nearestWalk` nearest
    /// notes of the unfiltered list, and the walk decides the page when `limit + 1` of them
    /// match (the largest spheroid distance among those bounds the page, as in the
    /// unfiltered statement) or when it saw every note in range (its matches are all there
    /// are). The walk stops at its `limit + 1`-th match: its rows come in the KNN scan's
    /// order (`walk_order`, an output column of the ordered subquery, so the planner keeps that
    /// order rather than sorting the whole walk), and the `nearestWalk`-th note is kept as a
    /// marker of a walk that went the whole way (coffee near London: 135 notes read, not
    /// 500; 5.3 ms a page instead of 8.0 at 1M). The rows are numbered after the LIMIT, by
    /// the subquery's `walk_order` column, so the window keeps the scan's order and the planner
    /// knows it: a window over `location <-> origin` of its own would be a second expression
    /// in a generic plan (the origin is bound again), sorted apart from the scan, every note
    /// in range numbered, and ties at the 500th place broken another way; a window with no
    /// order hides the scan's order, and the whole walk was sorted again.
    ///
    /// The walk goes nearest first in degrees where it can (`PlanarWalk`), which is no loss:
    /// its matches bound the page by their largest spheroid distance, and `by_walk` takes every
    /// match within it (through the planar index too), in spheroid order; or it saw every note
    /// in range. Either holds in any order.
    ///
    /// Otherwise (fewer than 1 in 10 of the nearest notes match) `by_filter` runs instead of
    /// `by_walk` (each is gated by a one-time filter on the walk's counts): every match in
    /// range, found through the filter's own index (trigram, author, viewport, place) and
    /// sorted by spheroid distance. Its range check is
    /// `_ST_DWithin`, ST_DWithin's own test without the index support, so the planner
    /// cannot trade that index for a walk of the spatial one (PostGIS underestimates how
    /// many notes a city holds). The page is exact either way.
    private static func filteredNearestStatement(
        _ list: NoteList, origin: PostgresQuery, keyset: PostgresQuery, condition: PostgresQuery, tenantID: Int64, viewerID: Int64
    ) -> PostgresQuery {
        let (filters, limit) = (list.filters, list.limit)
        let walk = Self.nearestWalk
        let inRange = Self.condition(filters, tenantID: tenantID, viewerID: viewerID, reading: .throughFilterIndex)
        let reach: PostgresQuery = "(SELECT max(distance) + 0.001 FROM sphere_nearest)"
        let route = Self.walkRoute(filters, origin: origin, reach: reach, tenantID: tenantID, viewerID: viewerID)
        return """
            WITH walk AS MATERIALIZED (
                SELECT ST_Distance(n.location, \(origin)) AS distance, n.matched, n.position
                FROM (
                    SELECT n.*, row_number() OVER (ORDER BY n.walk_order) AS position
                    FROM (
                        SELECT n.*, \(route.order) AS walk_order, (\(condition)) AS matched
                        FROM tenant_notes n
                        WHERE \(route.walking)\(keyset)
                        ORDER BY walk_order
                        LIMIT \(walk)
                    ) n
                ) n
                WHERE n.matched OR n.position = \(walk)
                ORDER BY n.walk_order
                LIMIT \(limit + 1)
            ),
            sphere_nearest AS (
                SELECT distance FROM walk WHERE matched
            ),
            decided AS (
                SELECT (SELECT count(*) FROM sphere_nearest) = \(limit + 1)
                       OR NOT EXISTS (SELECT FROM walk WHERE position = \(walk)) AS by_walk
            ),
            by_walk AS MATERIALIZED (
                SELECT n.*, ST_Distance(n.location, \(origin)) AS distance
                FROM \(ExactNearest.fenced("tenant_notes", as: "n", tenantID: tenantID,
                                            where: route.withinReach + "\n  AND (SELECT by_walk FROM decided)"))
                WHERE \(condition)\(keyset)
                ORDER BY distance, n.id
                LIMIT \(limit + 1)
            ),
            by_filter AS MATERIALIZED (
                SELECT n.*, ST_Distance(n.location, \(origin)) AS distance
                FROM tenant_notes n
                WHERE \(inRange)\(keyset)
                  AND NOT (SELECT by_walk FROM decided)
                ORDER BY distance, n.id
                LIMIT \(limit + 1)
            )
            SELECT \(Self.noteColumns), n.distance
            FROM (SELECT * FROM by_walk UNION ALL SELECT * FROM by_filter) n
            JOIN tenant_users u ON u.tenant_id = \(tenantID) AND u.id = n.user_id
            ORDER BY n.distance, n.id
            """
    }

    /// How a filtered nearest page walks (`order`, over the notes of `walking`) and reads the
    /// walk's page again (`withinReach`: the notes within `reach`, the walk's farthest match,
    /// through a spatial index, which `by_walk` filters and sorts by spheroid distance). The
    /// filters are tested on those few notes behind a fence (`ExactNearest.fenced`).
    private struct WalkRoute {
        var order: PostgresQuery
        var walking: PostgresQuery
        var withinReach: PostgresQuery
    }

    /// Nearest in degrees where it can (`PlanarWalk`), else through the geography index.
    private static func walkRoute(_ filters: NoteFilters, origin: PostgresQuery, reach: PostgresQuery, tenantID: Int64, viewerID: Int64)
        -> WalkRoute
    {
        var unfiltered = filters
        (unfiltered.search, unfiltered.author, unfiltered.bbox, unfiltered.placeID) = (nil, nil, nil, nil)
        guard let planar = filters.near.flatMap({ PlanarWalk(near: $0, radius: filters.radius) }) else {
            return WalkRoute(order: "n.location <-> \(origin)",
                             walking: Self.condition(unfiltered, tenantID: tenantID, viewerID: viewerID, reading: .walk),
                             withinReach: "ST_DWithin(n.location, \(origin), \(reach))")
        }
        return WalkRoute(
            order: planar.order("n"),
            walking: Self.condition(unfiltered, tenantID: tenantID, viewerID: viewerID, reading: .throughFilterIndex) + planar.inBox("n"),
            withinReach: planar.within(reach, of: "n", origin: origin) ?? "ST_DWithin(n.location, \(origin), \(reach))")
    }
}
