/// `POST /v1/places`: a custom place, named by a user.
struct PlaceDraft: RequestBody {
    let name: String
    let lat: Double
    let lng: Double

    init?(reading body: inout JSONObjectReader, rules: Void) {
        let request = CreatePlaceRequest(reading: &body)
        let name = request.name.flatMap { PlaceRules.name($0, in: &body) }
        guard let name, let lat = request.lat, let lng = request.lng, body.errors.isEmpty else { return nil }
        (self.name, self.lat, self.lng) = (name, lat, lng)
    }
}

/// `PATCH /v1/places/{id}`: a new name.
struct PlaceRename: RequestBody {
    let name: String

    init?(reading body: inout JSONObjectReader, rules: Void) {
        guard let name = RenamePlaceRequest(reading: &body).name.flatMap({ PlaceRules.name($0, in: &body) }) else { return nil }
        self.name = name
    }
}
