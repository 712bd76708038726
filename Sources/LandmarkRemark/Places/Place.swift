import Foundation
import Postgres

/// A named landmark as the API shows it: `default` (curated by an operator) or `custom` (added by a user).
struct Place: JSONWritable, Sendable {
    let id: Int64
    let name: String
    let lat: Double
    let lng: Double
    let kind: String
    /// Who added a custom place, shown as a note's `author` is; nil for default places and
    /// once the creator's account is deleted.
    let createdBy: Note.Author?
    /// Notes about the place that the caller may see.
    let noteCount: Int
    let createdAt: Date
    var distance: Double?

    /// The columns `init(row:)` reads over `p` (places); `viewer` decides which notes count.
    static func columns(viewer: Int64) -> PostgresQuery {
        """
        p.id, p.name, ST_Y(p.location::geometry), ST_X(p.location::geometry), p.kind, p.created_by,
        (SELECT count(*) FROM tenant_notes n
         WHERE n.tenant_id = p.tenant_id AND n.place_id = p.id AND (n.visibility = 'public' OR n.user_id = \(viewer))),
        p.created_at,
        (SELECT cu.username FROM tenant_users cu WHERE cu.tenant_id = p.tenant_id AND cu.id = p.created_by)
        """
    }

    static let columnCount = 9

    init(row: PostgresRow) throws {
        // Column by column, as `Note.init(row:viewer:)` and for the same reason.
        id = try row.decode(Int64.self, column: 0)
        name = try row.decode(String.self, column: 1)
        lat = try row.decode(Double.self, column: 2)
        lng = try row.decode(Double.self, column: 3)
        kind = try row.decode(String.self, column: 4)
        let creatorID = try row.decode(Int64?.self, column: 5)
        noteCount = try row.decode(Int.self, column: 6)
        createdAt = try row.decode(Date.self, column: 7)
        let creatorName = try row.decode(String?.self, column: 8)
        createdBy = creatorID.flatMap { id in creatorName.map { Note.Author(id: id, username: $0) } }
    }

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
    static func name(_ raw: String) -> String? {
        let trimmed = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...100).contains(trimmed.unicodeScalars.count), !NoteRules.containsForbiddenControl(trimmed),
            !trimmed.contains("\n"), !trimmed.contains("\t")
        else { return nil }
        return trimmed
    }
}
