import Foundation

/// A map viewport: west/south/east/north edges in degrees. When `west > east` it crosses the
/// antimeridian (a view of the Pacific from 170° E to 170° W).
public struct BoundingBox: Sendable, Hashable {
    public var west: Double
    public var south: Double
    public var east: Double
    public var north: Double

    public init(west: Double, south: Double, east: Double, north: Double) {
        (self.west, self.south, self.east, self.north) = (west, south, east, north)
    }

    /// The box a map shows around `center`, `latitudeDelta` by `longitudeDelta` degrees (what a
    /// MapKit region gives). Longitudes wrap: a region centred near 180° crosses it, and one
    /// wider than the world covers it all. Latitudes are clamped to the poles.
    public init(center: Coordinate, latitudeDelta: Double, longitudeDelta: Double) {
        south = max(-90, center.latitude - latitudeDelta / 2)
        north = min(90, center.latitude + latitudeDelta / 2)
        if longitudeDelta >= 360 {
            (west, east) = (-180, 180)
        } else {
            west = Self.wrap(center.longitude - longitudeDelta / 2)
            east = Self.wrap(center.longitude + longitudeDelta / 2)
        }
    }

    public var crossesAntimeridian: Bool { west > east }

    /// `min_lng,min_lat,max_lng,max_lat`, as the API takes it.
    var parameter: String { [west, south, east, north].map(Self.format).joined(separator: ",") }

    /// Into -180...180; 180 stays 180 (the east edge of a box that ends there).
    static func wrap(_ longitude: Double) -> Double {
        var value = longitude.truncatingRemainder(dividingBy: 360)
        if value > 180 { value -= 360 }
        if value < -180 { value += 360 }
        return value
    }

    /// At most 7 decimals (about a centimetre): the API takes up to 15, and shorter is kinder to logs.
    static func format(_ value: Double) -> String {
        var text = String(format: "%.7f", value)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text == "-0" ? "0" : text
    }
}

/// Which notes a list, the clusters or a user's notes ask for. Every field is optional;
/// `near` orders nearest first and adds each note's distance.
public struct NoteQuery: Sendable, Hashable {
    public enum SearchField: String, Sendable, Hashable {
        case all, body, username
    }

    public enum AuthorFilter: Sendable, Hashable {
        case me
        case others
        case username(String)

        var parameter: String {
            switch self {
            case .me: "me"
            case .others: "others"
            case .username(let name): name
            }
        }
    }

    public var near: Coordinate?
    /// With `near` only: within this many metres.
    public var radiusMeters: Double?
    public var bbox: BoundingBox?
    /// Case-insensitive substring; `%`, `_` and `\` match themselves.
    public var text: String?
    public var searchIn: SearchField?
    public var author: AuthorFilter?
    public var placeID: String?
    /// 1 to 200 per page (the service's default is 50).
    public var pageSize: Int?

    public init(
        near: Coordinate? = nil, radiusMeters: Double? = nil, bbox: BoundingBox? = nil, text: String? = nil,
        searchIn: SearchField? = nil, author: AuthorFilter? = nil, placeID: String? = nil, pageSize: Int? = nil
    ) {
        self.near = near
        self.radiusMeters = radiusMeters
        self.bbox = bbox
        self.text = text
        self.searchIn = searchIn
        self.author = author
        self.placeID = placeID
        self.pageSize = pageSize
    }

    var nearParameter: String? { near.map(Self.parameter) }

    /// `lat,lng`, as the API takes `near`.
    static func parameter(_ coordinate: Coordinate) -> String {
        "\(BoundingBox.format(coordinate.latitude)),\(BoundingBox.format(coordinate.longitude))"
    }
}

/// Which places a list asks for.
public struct PlaceQuery: Sendable, Hashable {
    public var near: Coordinate?
    public var radiusMeters: Double?
    public var bbox: BoundingBox?
    /// Case-insensitive substring of the name.
    public var name: String?
    public var pageSize: Int?

    public init(near: Coordinate? = nil, radiusMeters: Double? = nil, bbox: BoundingBox? = nil, name: String? = nil, pageSize: Int? = nil) {
        self.near = near
        self.radiusMeters = radiusMeters
        self.bbox = bbox
        self.name = name
        self.pageSize = pageSize
    }
}

/// A list that follows `next_cursor` page by page as it is iterated: every item once, in
/// the list's order, fetching the next page only when the last one is used up.
public struct Pages<Item: Sendable>: AsyncSequence, Sendable {
    public typealias Element = Item
    let fetch: @Sendable (_ cursor: String?) async throws -> Page<Item>

    public struct AsyncIterator: AsyncIteratorProtocol {
        let fetch: @Sendable (String?) async throws -> Page<Item>
        var buffer: [Item] = []
        var cursor: String?
        var started = false

        public mutating func next() async throws -> Item? {
            while buffer.isEmpty {
                if started && cursor == nil { return nil }
                let page = try await fetch(cursor)
                started = true
                // A cursor that does not move would loop forever: stop instead.
                cursor = page.nextCursor == cursor ? nil : page.nextCursor
                buffer = page.items.reversed()
            }
            return buffer.popLast()
        }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(fetch: fetch) }
}
