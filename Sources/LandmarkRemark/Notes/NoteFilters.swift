import Credentials
import Foundation
import Postgres

/// The filters lists and clusters share: `near` with `radius_m`, `bbox`, `q` with `in`,
/// `author`, `place_id`. Parsing is strict; each bad parameter is a `400` that names it.
struct NoteFilters: Sendable {
    struct Point: Sendable, Equatable {
        let lat: Double
        let lng: Double

        /// -180 is read as 180, the same meridian: geography KNN fails on -180 (see migration 0004).
        init(lat: Double, lng: Double) {
            self.lat = lat
            self.lng = lng == -180 ? 180 : lng
        }

        /// The point as a geography, built from bound numbers.
        var geography: PostgresQuery { "ST_SetSRID(ST_MakePoint(\(lng), \(lat)), 4326)::geography" }
    }

    enum Author: Sendable, Equatable {
        case me
        case others
        case username(String)
        /// Resolved beforehand, for `/v1/users/{username}/notes`.
        case user(id: Int64)
    }

    enum SearchField: String, Sendable {
        case all, body, username
    }

    struct Search: Sendable, Equatable {
        let text: String
        let field: SearchField
        /// The users whose names match, once `resolved(tenantID:on:)` has looked them up.
        var userIDs: [Int64]?

        /// `%text%` for ILIKE, with `\`, `%` and `_` escaped so they match themselves
        /// (backslash is LIKE's default escape character).
        var pattern: String {
            var escaped = "%"
            for character in text {
                if character == "\\" || character == "%" || character == "_" { escaped.append("\\") }
                escaped.append(character)
            }
            return escaped + "%"
        }
    }

    static let maximumRadius = 20_037_509.0
    static let maximumSearchLength = 100

    var near: Point?
    var radius: Double?
    var bbox: BoundingBox?
    var search: Search?
    var author: Author?
    var placeID: Int64?

    init() {}

    /// Reads the filter parameters; `author` is not read when the path fixes it. Over notes
    /// (`searchesNotes`), a `q` no trigram index can serve is refused; place names are few
    /// per tenant, and any `q` is cheap there.
    init(_ parameters: inout QueryParameters, author fixedAuthor: Author? = nil, searchesNotes: Bool = true) throws {
        if let text = parameters.string("near") {
            let parts = text.split(separator: ",", omittingEmptySubsequences: false)
            guard parts.count == 2, let lat = QueryParameters.number(parts[0]), let lng = QueryParameters.number(parts[1]),
                (-90...90).contains(lat), (-180...180).contains(lng)
            else { throw AppError.malformed("near must be lat,lng with lat from -90 to 90 and lng from -180 to 180") }
            near = Point(lat: lat, lng: lng)
        }
        if let text = parameters.string("radius_m") {
            guard let radius = QueryParameters.number(text), (1...Self.maximumRadius).contains(radius) else {
                throw AppError.malformed("radius_m must be a number of metres from 1 to 20037509")
            }
            guard near != nil else { throw AppError.malformed("radius_m needs near") }
            self.radius = radius
        }
        if let text = parameters.string("bbox") {
            guard let box = BoundingBox(parameter: text) else {
                throw AppError.malformed(
                    "bbox must be min_lng,min_lat,max_lng,max_lat with longitudes from -180 to 180, latitudes from -90 to 90 and min_lat <= max_lat")
            }
            bbox = box
        }
        try readSearch(&parameters, searchesNotes: searchesNotes)
        if let fixedAuthor {
            author = fixedAuthor
        } else if let text = parameters.string("author") {
            switch text {
            case "me": author = .me
            case "others": author = .others
            default:
                guard AccountRules.usernameProblem(text) == nil else {
                    throw AppError.malformed("author must be me, others or a username")
                }
                author = .username(text)
            }
        }
        if let text = parameters.string("place_id") {
            guard let id = NoteRules.id(text) else { throw AppError.malformed("place_id must be a place id") }
            placeID = id
        }
    }

    private mutating func readSearch(_ parameters: inout QueryParameters, searchesNotes: Bool) throws {
        let field = parameters.string("in")
        guard let text = parameters.string("q") else {
            if field != nil { throw AppError.malformed("in needs q") }
            return
        }
        let length = text.unicodeScalars.count
        guard length >= 1, length <= Self.maximumSearchLength else {
            throw AppError.malformed("q must be 1 to \(Self.maximumSearchLength) characters")
        }
        guard !NoteRules.containsForbiddenControl(text) else {
            throw AppError.malformed("q must not contain control characters")
        }
        guard let parsedField = SearchField(rawValue: field ?? "all") else {
            throw AppError.malformed("in must be all, body or username")
        }
        // ILIKE '%…%' over note bodies is served by the trigram index only when q holds a
        // trigram; without one every note of the tenant is read and re-checked (0.35 s for `qj`,
        // 1.5 s for 100 `%` on 300,000 notes). Usernames are few: any q is cheap there.
        guard !searchesNotes || parsedField == .username || Self.hasTrigram(text) else {
            throw AppError.queryTooBroad(field: "q", "needs 3 letters or digits in a row to search note bodies (or in=username)")
        }
        search = Search(text: text, field: parsedField)
    }

    /// Whether `text` has a run of 3 letters or digits: what pg_trgm makes index trigrams of.
    static func hasTrigram(_ text: String) -> Bool {
        var run = 0
        for scalar in text.unicodeScalars {
            run = scalar.properties.isAlphabetic || scalar.properties.numericType != nil ? run + 1 : 0
            if run >= 3 { return true }
        }
        return false
    }

    /// Eight bytes that change with any filter, carried in cursors so a cursor
    /// is only honoured by the query that produced it.
    var fingerprint: [UInt8] {
        var canonical = "v1"
        if let near { canonical += "|near=\(near.lat),\(near.lng)" }
        if let radius { canonical += "|radius=\(radius)" }
        if let bbox { canonical += "|bbox=\(bbox.canonical)" }
        // Length-prefixed, so no text inside q can imitate the parameters after it.
        if let search { canonical += "|in=\(search.field.rawValue)|q=\(search.text.utf8.count):\(search.text)" }
        switch author {
        case .none: break
        case .me: canonical += "|author=me"
        case .others: canonical += "|author=others"
        case .username(let name): canonical += "|author=@\(name.lowercased())"
        case .user(let id): canonical += "|author=#\(id)"
        }
        if let placeID { canonical += "|place=\(placeID)" }
        return Array(Tokens.sha256(canonical).prefix(8))
    }
}
