import Foundation
import Postgres

/// A named landmark as the API shows it: `default` (curated by an operator) or `custom` (added by a user).
struct Place: JSONWritable, Sendable {
    let id: Int64
    let name: String
    let lat: Double
    let lng: Double
    let kind: String
    let createdBy: Int64?
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
        p.created_at
        """
    }

    static let columnCount = 8

    init(row: PostgresRow) throws {
        let (id, name, lat, lng, kind, createdBy, noteCount, createdAt) =
            try row.decode((Int64, String, Double, Double, String, Int64?, Int, Date).self)
        self.id = id
        self.name = name
        self.lat = lat
        self.lng = lng
        self.kind = kind
        self.createdBy = createdBy
        self.noteCount = noteCount
        self.createdAt = createdAt
    }

    // Ids are strings; created_by is always present (null for default places and
    // after the creator's account is gone), distance_m only with `near`. Keys sorted.
    func write(to json: inout JSONWriter) {
        json.object { json in
            json.key("created_at")
            json.string(Timestamp.format(createdAt))
            json.key("created_by")
            json.string(createdBy.map(String.init))
            if let distance {
                json.key("distance_m")
                json.number((distance * 10).rounded() / 10)
            }
            json.key("id")
            json.string(String(id))
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
