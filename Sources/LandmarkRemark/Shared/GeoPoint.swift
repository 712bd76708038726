/// A position in WGS 84 degrees: a note's, a place's, or the `near` of a list.
struct GeoPoint: Sendable, Equatable {
    let lat: Double
    let lng: Double

    /// -180 is read as 180, the same meridian: geography KNN fails on -180 (see migration 0004).
    init(lat: Double, lng: Double) {
        self.lat = lat
        self.lng = lng == -180 ? 180 : lng
    }

    /// Parses `lat,lng` as a query parameter spells it; nil unless both are plain numbers in range.
    init?(parameter text: String) {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 2, let lat = QueryParameters.number(parts[0]), let lng = QueryParameters.number(parts[1]),
            (-90...90).contains(lat), (-180...180).contains(lng)
        else { return nil }
        self.init(lat: lat, lng: lng)
    }
}
