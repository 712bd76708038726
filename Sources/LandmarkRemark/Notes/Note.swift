import Foundation
import Postgres

/// A note as the API shows it to one caller (`is_mine` and `distance_m` depend on who asks and how).
struct Note: Encodable, Sendable, Equatable {
    enum Visibility: String, Sendable, Equatable {
        case `public`, `private`
    }

    struct Author: Encodable, Sendable, Equatable {
        let id: String
        let username: String
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
        let (id, body, lat, lng, userID, username, visibility, placeID, created, updated) =
            try row.decode((Int64, String, Double, Double, Int64, String, String, Int64?, Date, Date).self)
        self.id = id
        self.body = body
        self.lat = lat
        self.lng = lng
        self.author = Author(id: String(userID), username: username)
        self.isMine = userID == viewer
        // The table's CHECK allows only these two.
        self.visibility = Visibility(rawValue: visibility) ?? .private
        self.placeID = placeID
        self.createdAt = created
        self.updatedAt = updated
        self.distance = nil
    }

    enum CodingKeys: String, CodingKey {
        case id, body, lat, lng, author, isMine, visibility, placeId, createdAt, updatedAt, distanceM
    }

    // Ids travel as strings; place_id is always present (null when unset), distance_m only with `near`.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(String(id), forKey: .id)
        try container.encode(body, forKey: .body)
        try container.encode(lat, forKey: .lat)
        try container.encode(lng, forKey: .lng)
        try container.encode(author, forKey: .author)
        try container.encode(isMine, forKey: .isMine)
        try container.encode(visibility.rawValue, forKey: .visibility)
        try container.encode(placeID.map(String.init), forKey: .placeId)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(updatedAt, forKey: .updatedAt)
        if let distance {
            try container.encode((distance * 10).rounded() / 10, forKey: .distanceM)
        }
    }
}
