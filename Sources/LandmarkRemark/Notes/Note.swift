import Foundation

/// A note as the API shows it to one caller (`is_mine` and `distance_m` depend on who asks and how).
struct Note: JSONWritable, Sendable, Equatable {
    enum Visibility: String, Sendable, Equatable {
        case `public`, `private`
    }

    let id: Int64
    let body: String
    let lat: Double
    let lng: Double
    let author: UserSummary
    let isMine: Bool
    let visibility: Visibility
    let placeID: Int64?
    let createdAt: Date
    let updatedAt: Date
    /// Metres on the spheroid, present only when the request gave `near`.
    var distance: Double?

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
