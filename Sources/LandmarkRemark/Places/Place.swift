import Foundation

/// A named landmark as the API shows it: `default` (curated by an operator) or `custom` (added by a user).
struct Place: JSONResponse {
    let id: Int64
    let name: String
    let lat: Double
    let lng: Double
    let kind: String
    /// Who added a custom place, shown as a note's `author` is; nil for default places and
    /// once the creator's account is deleted.
    let createdBy: UserSummary?
    /// Notes about the place that the caller may see.
    let noteCount: Int
    let createdAt: Date
    var distance: Double?

    // Ids are strings; created_by is always present ({id, username} like a note's author;
    // null for default places and after the creator's account is gone), distance_m only
    // with `near`. Keys sorted.
    func write(to json: inout JSONWriter) {
        json.object { json in
            json.key("created_at")
            json.timestamp(createdAt)
            json.key("created_by")
            if let createdBy {
                createdBy.write(to: &json)
            } else {
                json.null()
            }
            if let distance {
                json.key("distance_m")
                json.number((distance * 10).rounded() / 10)
            }
            json.key("id")
            json.quotedInteger(id)
            json.key("kind")
            json.string(kind)
            json.key("lat")
            json.number(lat)
            json.key("lng")
            json.number(lng)
            json.key("name")
            json.string(name)
            json.key("note_count")
            json.integer(Int64(noteCount))
        }
    }
}

/// The name rule: 1–100 characters after trimming, no control characters.
enum PlaceRules {
    static let nameProblem = "must be 1 to 100 characters, without control characters"

    static func name(_ raw: String) -> String? {
        let trimmed = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...100).contains(trimmed.unicodeScalars.count), !TextRules.containsForbiddenControl(trimmed),
            !trimmed.contains("\n"), !trimmed.contains("\t")
        else { return nil }
        return trimmed
    }
}
