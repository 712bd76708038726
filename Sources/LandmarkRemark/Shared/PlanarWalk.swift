import Postgres

/// Nearest first in degrees, through a `(tenant_id, location::geometry)` index
/// (`notes_location_lnglat`, `places_location_lnglat`), for statements whose walk only bounds
/// a page that is then read again and sorted on the spheroid (`ExactNearest`, nearest notes
/// with a filter): what such a walk decides holds in any order. The geography index's own KNN
/// (`<->` on the sphere) slows with density: 500 notes within 10 km of London took 18-20 ms
/// at ten million notes and 5.4-6.1 ms at one million, the planar index 4.0-4.6 ms at both
/// (bench/results/2026-11-29-near.md).
///
/// Only where the circle's box is one rectangle of degrees: across the antimeridian (or
/// touching it: 180 and -180 are one meridian) distance in degrees is no order, nor is the box
/// one rectangle, and the geography index walks as before. Without a radius there is no box
/// to keep the reach inside one, so the page is read again through the geography index.
struct PlanarWalk {
    let near: GeoPoint
    /// The circle's box, nil without a radius.
    let box: BoundingBox?

    init?(near: GeoPoint, radius: Double?) {
        self.near = near
        guard let radius else {
            box = nil
            return
        }
        let box = BoundingBox(around: near, radius: radius)
        guard box.longitudeRanges.count == 1 else { return nil }
        self.box = box
    }

    /// The walk's order for rows of `alias`.
    func order(_ alias: PostgresQuery) -> PostgresQuery {
        "\(alias).location::geometry <-> ST_SetSRID(ST_MakePoint(\(near.lng), \(near.lat)), 4326)"
    }

    /// `AND` the circle's box, so that in a sparse area the walk ends with the box, not the
    /// tenant. The walked condition must test the radius without the geography index offered
    /// (`_ST_DWithin`), or the planner may trade the walk for that index and a sort of a city.
    func inBox(_ alias: PostgresQuery) -> PostgresQuery {
        guard let box else { return "" }
        return "\n  AND \(alias).location::geometry && ST_MakeEnvelope(\(box.minLng), \(box.minLat), \(box.maxLng), \(box.maxLat), 4326)"
    }

    /// The rows within `metres` of the point (known only as the statement runs: the walk's
    /// farthest row) through the planar index, for a statement to read behind a fence and
    /// filter outside it; nil without a radius (read them with the geography index).
    func within(_ metres: PostgresQuery, of alias: PostgresQuery, origin: PostgresQuery) -> PostgresQuery? {
        guard box != nil else { return nil }
        // The box of BoundingBox(around:radius:), in SQL: a sphere of the polar radius, 1 %
        // wider; every longitude where the circle reaches a pole. The radius' box does not
        // cross the antimeridian and the walk's rows lie in range, so neither does this one.
        // A subquery, so the box is computed once per run and is an index condition.
        return """
            _ST_DWithin(\(alias).location, \(origin), \(metres), true)
                      AND \(alias).location::geometry && (
                          SELECT ST_Expand(ST_SetSRID(ST_MakePoint(\(near.lng), \(near.lat)), 4326),
                                           CASE WHEN sin(angle) >= cos(radians(\(near.lat))) THEN 360
                                                ELSE degrees(asin(sin(angle) / cos(radians(\(near.lat))))) END,
                                           degrees(angle))
                          FROM (SELECT \(metres) / 6356752.3 * 1.01 AS angle) reach)
            """
    }
}
