import Postgres

/// Nearest first in exact spheroid order, in two steps of one statement, for any table
/// with a geography `location` and an `id` (notes and places).
///
/// KNN (`ORDER BY location <-> point`) lets the GiST index hand out rows nearest first
/// without reading the rest, but for geography `<->` measures on the sphere, which can
/// order two rows differently from the spheroid (by up to about 0.5%). So `sphere_nearest`
/// takes the first `limit + 1` rows past the cursor in sphere order and notes the largest
/// spheroid distance among them, D. At least that many rows lie within D, so the true page
/// lies within D too: `page` fetches the rows within D (plus a millimetre against rounding)
/// through the same index, with ST_DWithin, and sorts those few by the spheroid distance and
/// id. The keyset is that same `(ST_Distance, id)` pair, so paging is exact even among equal
/// distances.
///
/// Any order of the first step would do, so where it can (`PlanarWalk`) it goes nearest in
/// degrees, and `page` reads the rows within D through the planar index too, behind a fence
/// (`OFFSET 0`) with the condition tested outside it (offered the condition's own indexes,
/// a planner once ANDed a city's worth of them in). The first page within 10 km of London
/// took 13.8 ms at ten million notes through the geography index, 2.0 ms so
/// (bench/results/2026-11-29-near.md).
enum ExactNearest {
    /// The first step in degrees: the walk, `condition` as `page`'s but with the radius tested
    /// without the geography index offered (`_ST_DWithin`), and the tenant, for the fence.
    struct Planar {
        var walk: PlanarWalk
        var condition: PostgresQuery
        var tenantID: Int64
    }

    /// The tenant's rows of `relation` (as `alias`) for which `reached` holds, read behind a
    /// fence (`OFFSET 0`) for the caller to test its own condition outside: offered the
    /// condition's indexes beside the spatial one, the planner once ANDed a city's worth of a
    /// word's matches in (3.2 million notes for `coffee`, 621-672 ms a page).
    static func fenced(_ relation: PostgresQuery, as alias: PostgresQuery, tenantID: Int64, where reached: PostgresQuery) -> PostgresQuery {
        """
        (
            SELECT \(alias).* FROM \(relation) \(alias)
            WHERE \(alias).tenant_id = \(tenantID)
              AND \(reached)
            OFFSET 0
        ) \(alias)
        """
    }

    /// The condition that starts a page after the cursor's `(distance, id)`, for rows of `alias`.
    static func keyset(_ alias: PostgresQuery, origin: PostgresQuery, after cursor: KeysetCursor.Key?) -> PostgresQuery {
        guard case .nearest(let distance, let id)? = cursor else { return "" }
        return "\n  AND (ST_Distance(\(alias).location, \(origin)), \(alias).id) > (\(distance)::float8, \(id))"
    }

    /// `WITH sphere_nearest AS (…), page AS (…)`: the page's `limit + 1` rows of `relation`
    /// (read as `alias`) that meet `condition` (the keyset included), each with its
    /// `distance`. The caller selects from `page`, ordered by `distance, id`.
    static func page(of relation: PostgresQuery, as alias: PostgresQuery, where condition: PostgresQuery, origin: PostgresQuery, limit: Int,
                     planar: Planar? = nil) -> PostgresQuery
    {
        let reach: PostgresQuery = "(SELECT max(distance) + 0.001 FROM sphere_nearest)"
        let (walked, order): (PostgresQuery, PostgresQuery) = planar.map { ($0.condition + $0.walk.inBox(alias), $0.walk.order(alias)) }
            ?? (condition, "\(alias).location <-> \(origin)")
        var within: PostgresQuery = """
            \(relation) \(alias)
                WHERE \(condition)
                  AND ST_DWithin(\(alias).location, \(origin), \(reach))
            """
        if let planar, let reached = planar.walk.within(reach, of: alias, origin: origin) {
            within = """
                \(Self.fenced(relation, as: alias, tenantID: planar.tenantID, where: reached))
                WHERE \(condition)
                """
        }
        return """
            WITH sphere_nearest AS (
                SELECT ST_Distance(\(alias).location, \(origin)) AS distance
                FROM \(relation) \(alias)
                WHERE \(walked)
                ORDER BY \(order)
                LIMIT \(limit + 1)
            ),
            page AS (
                SELECT \(alias).*, ST_Distance(\(alias).location, \(origin)) AS distance
                FROM \(within)
                ORDER BY distance, \(alias).id
                LIMIT \(limit + 1)
            )
            """
    }
}
