/// The filters every list of things on the map takes, notes and places alike: `near` with
/// `radius_m`, `bbox`, and `q`. Parsing is strict; each bad parameter is a `400` that names it,
/// so both lists accept exactly the same spellings.
struct MapFilters: Sendable, Equatable {
    /// Half the globe's circumference on the spheroid: no two points are farther apart.
    static let maximumRadius = 20_037_509.0

    var near: GeoPoint?
    var radius: Double?
    var bbox: BoundingBox?
    var search: SearchText?

    init() {}

    /// Reads `near`, `radius_m`, `bbox` and `q`, in that order.
    init(_ parameters: inout QueryParameters) throws {
        if let text = parameters.string("near") {
            guard let point = GeoPoint(parameter: text) else {
                throw AppError.malformed("near must be lat,lng with lat from -90 to 90 and lng from -180 to 180")
            }
            near = point
        }
        if let text = parameters.string("radius_m") {
            guard let radius = QueryParameters.number(text), (1...Self.maximumRadius).contains(radius) else {
                throw AppError.malformed("radius_m must be a number of metres from 1 to 20037509")
            }
            guard near != nil else { throw AppError.malformed("radius_m needs near") }
            self.radius = radius
        }
        bbox = try BoundingBox(&parameters)
        if let text = parameters.string("q") {
            let length = text.unicodeScalars.count
            guard length >= 1, length <= SearchText.maximumLength else {
                throw AppError.malformed("q must be 1 to \(SearchText.maximumLength) characters")
            }
            guard !TextRules.containsForbiddenControl(text) else {
                throw AppError.malformed("q must not contain control characters")
            }
            search = SearchText(text: text)
        }
    }

    /// A canonical spelling of the area filters (`near`, `radius`, `bbox`), for cursor
    /// fingerprints. The search text is not part of it: each list adds its own, length-prefixed
    /// so nothing inside it can imitate the parameters after it (`NoteFilters.fingerprint`).
    var canonical: String {
        var canonical = ""
        if let near { canonical += "|near=\(near.lat),\(near.lng)" }
        if let radius { canonical += "|radius=\(radius)" }
        if let bbox { canonical += "|bbox=\(bbox.canonical)" }
        return canonical
    }
}
