import Foundation
import Postgres

/// A note as the API shows it to one caller (`is_mine` and `distance_m` depend on who asks and how).
struct Note: JSONWritable, Sendable, Equatable {
    enum Visibility: String, Sendable, Equatable {
        case `public`, `private`
    }

    /// A user as notes and places name them: `{"id", "username"}`.
    struct Author: Sendable, Equatable, JSONWritable {
        let id: Int64
        let username: String

        func write(to json: inout JSONWriter) {
            json.object { json in
                json.key("id")
                json.quotedInteger(id)
                json.key("username")
                json.string(username)
            }
        }
    }

    let id: Int64
    let body: String
    let lat: Double
    let lng: Double
    let author: Author
    let isMine: Bool
    let visibility: Visibility
    let placeID: Int64?
    let createdAt: Date
    let updatedAt: Date
    /// Metres on the spheroid, present only when the request gave `near`.
    var distance: Double?

    /// The columns `init(row:viewer:)` reads, in order, over `n` (notes) and `u` (users).
    /// The location is read as geometry so `ST_X`/`ST_Y` give the stored degrees back unchanged.
    static let columns: PostgresQuery = """
        n.id, n.body, ST_Y(n.location::geometry), ST_X(n.location::geometry), n.user_id, u.username,
        n.visibility, n.place_id, n.created_at, n.updated_at
        """

    /// How many columns `columns` selects; list queries append their sort keys after them.
    static let columnCount = 10

    /// Decodes the first `columnCount` columns of `row`, as seen by the user `viewer`.
    init(row: PostgresRow, viewer: Int64) throws {
        // Column by column with concrete types, not `row.decode((…).self)`: the
        // tuple form's parameter pack is not specialised and fetched generic
        // metadata for every cell, a tenth of a list request's CPU.
        id = try row.decode(Int64.self, column: 0)
        body = try row.decode(String.self, column: 1)
        lat = try row.decode(Double.self, column: 2)
        lng = try row.decode(Double.self, column: 3)
        let userID = try row.decode(Int64.self, column: 4)
        author = Author(id: userID, username: try row.decode(String.self, column: 5))
        isMine = userID == viewer
        // The table's CHECK allows only these two.
        visibility = Visibility(rawValue: try row.decode(String.self, column: 6)) ?? .private
        placeID = try row.decode(Int64?.self, column: 7)
        createdAt = try row.decode(Date.self, column: 8)
        updatedAt = try row.decode(Date.self, column: 9)
        self.distance = nil
    }

    // Ids travel as strings; place_id is always present (null when unset), distance_m
    // only with `near`. Keys in sorted order, as every other response has them.
    func write(to json: inout JSONWriter) {
        json.object { json in
            json.key("author")
            author.write(to: &json)
            json.key("body")
            json.string(body)
            json.key("created_at")
            json.timestamp(createdAt)
            if let distance {
                json.key("distance_m")
                json.number((distance * 10).rounded() / 10)
            }
            json.key("id")
            json.quotedInteger(id)
            json.key("is_mine")
            json.bool(isMine)
            json.key("lat")
            json.number(lat)
            json.key("lng")
            json.number(lng)
            json.key("place_id")
            json.quotedInteger(placeID)
            json.key("updated_at")
            json.timestamp(updatedAt)
            json.key("visibility")
            json.string(visibility.rawValue)
        }
    }
}
