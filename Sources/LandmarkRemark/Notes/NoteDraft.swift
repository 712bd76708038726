import Credentials

/// A validated `POST /v1/notes` body.
struct NoteDraft: RequestBody, Equatable, JSONWritable {
    let body: String
    let lat: Double
    let lng: Double
    let visibility: Note.Visibility
    let placeID: Int64?

    /// A draft already valid (tests that drive `NoteStore` without HTTP).
    init(body: String, lat: Double, lng: Double, visibility: Note.Visibility = .public, placeID: Int64? = nil) {
        (self.body, self.lat, self.lng, self.visibility, self.placeID) = (body, lat, lng, visibility, placeID)
    }

    /// Reads and validates the body; every problem is reported at once as `422`.
    init?(reading reader: inout JSONObjectReader, rules: Void) {
        let rawBody = reader.string("body")
        var body: String?
        if let rawBody {
            switch NoteRules.body(rawBody) {
            case .success(let trimmed): body = trimmed
            case .failure(let problem): reader.fail("body", problem.message)
            }
        }
        let coordinates = NoteRules.coordinates(&reader)
        var visibility = Note.Visibility.public
        if let raw = reader.string("visibility", required: false) {
            switch NoteRules.visibility(raw) {
            case .success(let value): visibility = value
            case .failure(let problem): reader.fail("visibility", problem.message)
            }
        }
        let placeID = NoteRules.placeID(&reader)
        guard let body, let coordinates, reader.errors.isEmpty else { return nil }
        self.body = body
        self.lat = coordinates.lat
        self.lng = coordinates.lng
        self.visibility = visibility
        self.placeID = placeID ?? nil
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
