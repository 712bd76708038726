import Credentials

/// A validated `POST /v1/notes` body.
struct NoteDraft: RequestBody, Equatable, JSONWritable {
    let body: String
    let lat: Double
    let lng: Double
    let visibility: Visibility
    let placeID: Int64?

    /// A draft already valid (tests that drive `NoteStore` without HTTP).
    init(body: String, lat: Double, lng: Double, visibility: Visibility = .public, placeID: Int64? = nil) {
        (self.body, self.lat, self.lng, self.visibility, self.placeID) = (body, lat, lng, visibility, placeID)
    }

    /// Reads and validates the body; every problem is reported at once as `422`.
    init?(reading reader: inout JSONObjectReader, rules: Void) {
        let request = CreateNoteRequest(reading: &reader)
        let body = request.body.flatMap { NoteRules.body($0, in: &reader) }
        guard let body, let lat = request.lat, let lng = request.lng, reader.errors.isEmpty else { return nil }
        self.init(body: body, lat: lat, lng: lng, visibility: request.visibility ?? .public, placeID: request.placeID ?? nil)
    }

    /// What makes two creates "the same request" for `Idempotency-Key`: the validated
    /// values, so key order, white space and an explicit default do not matter.
    var fingerprint: [UInt8] { Tokens.sha256(jsonBytes) }

    // Sorted keys and a numeric place id: the bytes `JSONEncoder` made for the fingerprint
    // before, so keys stored before an upgrade still match their retries.
    func write(to json: inout JSONWriter) {
        json.object { json in
            json.key("body")
            json.string(body)
            json.key("lat")
            json.number(lat)
            json.key("lng")
            json.number(lng)
            json.key("place_id")
            if let placeID { json.integer(placeID) } else { json.null() }
            json.key("visibility")
            json.string(visibility.rawValue)
        }
    }
}
