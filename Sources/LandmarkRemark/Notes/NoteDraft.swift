import Credentials
import Foundation

/// A validated `POST /v1/notes` body.
struct NoteDraft: Sendable, Equatable, Encodable {
    let body: String
    let lat: Double
    let lng: Double
    let visibility: Note.Visibility
    let placeID: Int64?

    /// Reads and validates the body; every problem is reported at once as `422`.
    init(_ reader: JSONObjectReader) throws {
        var reader = reader
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
        try reader.finish()
        guard let body, let coordinates else { throw AppError.internalError }
        self.body = body
        self.lat = coordinates.lat
        self.lng = coordinates.lng
        self.visibility = visibility
        self.placeID = placeID ?? nil
    }

    /// What makes two creates "the same request" for `Idempotency-Key`: the validated
    /// values, so key order, white space and an explicit default do not matter.
    var fingerprint: [UInt8] {
        let canonical = (try? JSONCoding.encoder.encode(self)) ?? Data()
        return Tokens.sha256(Array(canonical))
    }

    enum CodingKeys: String, CodingKey { case body, lat, lng, visibility, placeId }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(body, forKey: .body)
        try container.encode(lat, forKey: .lat)
        try container.encode(lng, forKey: .lng)
        try container.encode(visibility.rawValue, forKey: .visibility)
        try container.encode(placeID, forKey: .placeId)
    }
}
