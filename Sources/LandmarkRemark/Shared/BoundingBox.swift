import Foundation

/// A map viewport, `min_lng,min_lat,max_lng,max_lat` in degrees. `minLng > maxLng`
/// means the box crosses the antimeridian (from 170 east across 180 to -170).
struct BoundingBox: Sendable, Equatable {
    let minLng: Double
    let minLat: Double
    let maxLng: Double
    let maxLat: Double

    var crossesAntimeridian: Bool { minLng > maxLng }

    /// Reads the `bbox` parameter, if there is one: every list and the event stream take the
    /// same spelling and say the same when it is wrong (`400`).
    init?(_ parameters: inout QueryParameters) throws {
        guard let text = parameters.string("bbox") else { return nil }
        guard let box = BoundingBox(parameter: text) else {
            throw AppError.malformed(
                "bbox must be min_lng,min_lat,max_lng,max_lat with longitudes from -180 to 180, latitudes from -90 to 90 and min_lat <= max_lat")
        }
        self = box
    }

    /// Parses the query value; nil unless it is four numbers in range with `min_lat <= max_lat`.
    init?(parameter text: String) {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        let numbers = parts.compactMap { QueryParameters.number($0.trimmingCharacters(in: .whitespaces)) }
        guard numbers.count == 4 else { return nil }
        let (minLng, minLat, maxLng, maxLat) = (numbers[0], numbers[1], numbers[2], numbers[3])
        let longitudes = -180.0...180.0
        let latitudes = -90.0...90.0
        guard longitudes.contains(minLng), longitudes.contains(maxLng), latitudes.contains(minLat),
            latitudes.contains(maxLat), minLat <= maxLat
        else { return nil }
        self.minLng = minLng
        self.minLat = minLat
        self.maxLng = maxLng
        self.maxLat = maxLat
    }

    /// A box that holds every point within `radius` metres (geodesic, on the WGS 84 spheroid)
    /// of `center`, with a margin: the circle is measured on a sphere of the spheroid's polar
    /// radius, the smallest, and widened by 1 %, so the box is never short of the circle (a
    /// property test checks it against PostGIS). A circle around a pole takes every longitude
    /// and reaches the pole; one across the antimeridian gives `minLng > maxLng`.
    init(around center: GeoPoint, radius: Double) {
        let polarRadius = 6_356_752.3
        let angle = radius / polarRadius * 1.01
        let latitudeSpan = angle * 180 / .pi
        var (south, north) = (center.lat - latitudeSpan, center.lat + latitudeSpan)
        var (west, east) = (-180.0, 180.0)
        let reachesPole = south <= -90 || north >= 90
        let sine = sin(min(angle, .pi / 2)) / cos(center.lat * .pi / 180)
        if !reachesPole && sine < 1 {
            let longitudeSpan = asin(sine) * 180 / .pi
            west = center.lng - longitudeSpan
            east = center.lng + longitudeSpan
            if west < -180 { west += 360 }
            if east > 180 { east -= 360 }
        }
        south = max(south, -90)
        north = min(north, 90)
        self.init(minLng: west, minLat: south, maxLng: east, maxLat: north)
    }

    private init(minLng: Double, minLat: Double, maxLng: Double, maxLat: Double) {
        (self.minLng, self.minLat, self.maxLng, self.maxLat) = (minLng, minLat, maxLng, maxLat)
    }

    /// A canonical spelling, for cursor fingerprints.
    var canonical: String { "\(minLng),\(minLat),\(maxLng),\(maxLat)" }

    /// The longitude ranges the box covers: one, or two when it crosses the antimeridian.
    /// 180 and -180 are one meridian and a note keeps the spelling it was saved with,
    /// so a box reaching one of them also takes the other (a zero-width range).
    var longitudeRanges: [(Double, Double)] {
        var ranges = crossesAntimeridian ? [(minLng, 180.0), (-180.0, maxLng)] : [(minLng, maxLng)]
        let covers = { (lng: Double) in ranges.contains { $0.0 <= lng && lng <= $0.1 } }
        if covers(180), !covers(-180) { ranges.append((-180, -180)) }
        if covers(-180), !covers(180) { ranges.append((180, 180)) }
        return ranges
    }
}
