import Postgres

// The map vocabulary in SQL: fragments that the stores of notes, places and events
// compose into their statements. Every value is a bound parameter.

extension GeoPoint {
    /// The point as a geography, built from bound numbers.
    var geography: PostgresQuery { "ST_SetSRID(ST_MakePoint(\(lng), \(lat)), 4326)::geography" }
}

extension BoundingBox {
    /// The condition "the row's `location` (a note's or a place's, as geometry) lies inside the
    /// box, edges included".
    ///
    /// `&&` against an envelope is what the GiST index on `(tenant_id, location::geometry)`
    /// answers (planar degrees, so a box is the same rectangle the map shows; see migration
    /// 0004 for why not geography). It compares single-precision index boxes, so the exact
    /// degree checks follow as a recheck on the few rows it returns. Across the antimeridian
    /// the box is two envelopes, and the planner ORs two index scans.
    ///
    /// `location` is program text naming the column (`n.location::geometry`).
    func condition(location: StaticString) -> PostgresQuery {
        var parts: [PostgresQuery] = []
        for (west, east) in longitudeRanges {
            parts.append("""
                (\(unsafeSQL: location) && ST_MakeEnvelope(\(west), \(minLat), \(east), \(maxLat), 4326)
                 AND ST_X(\(unsafeSQL: location)) BETWEEN \(west) AND \(east))
                """)
        }
        return "((\(parts.joined(separator: " OR "))) AND ST_Y(\(unsafeSQL: location)) BETWEEN \(minLat) AND \(maxLat))"
    }

    /// The same box over plain degree columns (the event log's `lat` and `lng`), named in program text.
    func condition(latitude: StaticString, longitude: StaticString) -> PostgresQuery {
        let ranges = longitudeRanges.map { west, east -> PostgresQuery in
            "\(unsafeSQL: longitude) BETWEEN \(west) AND \(east)"
        }
        return "(\(unsafeSQL: latitude) BETWEEN \(minLat) AND \(maxLat) AND (\(ranges.joined(separator: " OR "))))"
    }
}
