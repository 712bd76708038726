/// `POST /v1/places`: a custom place, named by a user.
struct PlaceDraft: RequestBody {
    let name: String
    let lat: Double
    let lng: Double

    init?(reading body: inout JSONObjectReader, rules: Void) {
        let raw = body.string("name")
        let name = raw.flatMap(PlaceRules.name)
        let (lat, lng) = (body.number("lat"), body.number("lng"))
        if raw != nil, name == nil { body.fail("name", PlaceRules.nameProblem) }
        if let lat, !(-90...90).contains(lat) { body.fail("lat", "must be from -90 to 90") }
        if let lng, !(-180...180).contains(lng) { body.fail("lng", "must be from -180 to 180") }
        guard let name, let lat, let lng, body.errors.isEmpty else { return nil }
        (self.name, self.lat, self.lng) = (name, lat, lng)
    }
}

/// `PATCH /v1/places/{id}`: a new name.
struct PlaceRename: RequestBody {
    let name: String

    init?(reading body: inout JSONObjectReader, rules: Void) {
        let raw = body.string("name")
        let name = raw.flatMap(PlaceRules.name)
        if raw != nil, name == nil { body.fail("name", PlaceRules.nameProblem) }
        guard let name else { return nil }
        self.name = name
    }
}
