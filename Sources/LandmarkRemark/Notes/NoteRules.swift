import Foundation

/// The field rules of a note (docs/api.md, "Notes"), shared by create and update.
enum NoteRules {
    static let maximumBodyLength = 500

    /// The body as stored (trimmed at both ends), or the problem with it.
    /// Lengths count Unicode code points, as the table's `char_length` CHECK does.
    static func body(_ raw: String) -> Result<String, Problem> {
        let trimmed = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        let length = trimmed.unicodeScalars.count
        guard length >= 1, length <= maximumBodyLength else {
            return .failure(Problem("must be 1 to \(maximumBodyLength) characters"))
        }
        guard !TextRules.containsForbiddenControl(trimmed) else {
            return .failure(Problem("must not contain control characters other than newline and tab"))
        }
        return .success(trimmed)
    }

    static func visibility(_ raw: String) -> Result<Note.Visibility, Problem> {
        guard let visibility = Note.Visibility(rawValue: raw) else { return .failure(Problem("must be public or private")) }
        return .success(visibility)
    }

    /// Reads `lat` and `lng` from a note body: finite numbers in WGS 84 range.
    static func coordinates(_ reader: inout JSONObjectReader) -> (lat: Double, lng: Double)? {
        let lat = reader.number("lat")
        let lng = reader.number("lng")
        if let lat, !(lat.isFinite && (-90...90).contains(lat)) { reader.fail("lat", "must be a number from -90 to 90") }
        if let lng, !(lng.isFinite && (-180...180).contains(lng)) { reader.fail("lng", "must be a number from -180 to 180") }
        guard let lat, let lng, lat.isFinite, lng.isFinite, (-90...90).contains(lat), (-180...180).contains(lng) else {
            return nil
        }
        return (lat, lng)
    }

    /// Reads `place_id`: absent, null, or a string id. Whether the place exists is the database's call.
    static func placeID(_ reader: inout JSONObjectReader) -> Int64?? {
        guard reader.contains("place_id") else {
            _ = reader.string("place_id", required: false)
            return .none
        }
        guard let text = reader.string("place_id", nullable: true) else { return .some(nil) }
        guard let id = ResourceID.parse(text) else {
            reader.fail("place_id", "must be a place id (a string of digits) or null")
            return .none
        }
        return .some(id)
    }

    struct Problem: Error, Equatable {
        let message: String
        init(_ message: String) { self.message = message }
    }
}
