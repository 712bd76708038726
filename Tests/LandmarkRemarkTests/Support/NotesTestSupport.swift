import Foundation
import HTTPTypes
import HummingbirdTesting
import Postgres
import Testing

/// Helpers shared by the Notes* suites.
extension TestClientProtocol {
    /// Creates a note through the API and returns it; records an issue unless `201`.
    @discardableResult
    func createNote(
        _ account: Account, _ body: String, lat: Double, lng: Double,
        visibility: String? = nil, placeID: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> API.Note {
        var json: [String: Any] = ["body": body, "lat": lat, "lng": lng]
        if let visibility { json["visibility"] = visibility }
        if let placeID { json["place_id"] = placeID }
        let response = try await call(.post, "/v1/notes", json: json, token: account.accessToken)
        #expect(response.status == .created, "create failed: \(response.body)", sourceLocation: sourceLocation)
        return try response.decode(API.Note.self)
    }

    /// `GET path` expecting `200` and a page of `Item`; returns its items and next cursor.
    func page<Item: APIModel>(
        _ path: String, token: String, of type: Item.Type, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> (items: [Item], next: String?) {
        let response = try await call(.get, path, token: token)
        #expect(response.status == .ok, "\(path): \(response.body)", sourceLocation: sourceLocation)
        let page = try response.decode(API.Page<Item>.self)
        return (page.items, page.nextCursor)
    }

    /// `GET path` expecting `200` and a page of notes.
    func page(_ path: String, token: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> (items: [API.Note], next: String?) {
        try await page(path, token: token, of: API.Note.self, sourceLocation: sourceLocation)
    }

    /// Walks every page of a list and returns all items in order.
    func walk<Item: APIModel>(_ path: String, token: String, limit: Int = 50, of type: Item.Type) async throws -> [Item] {
        var items: [Item] = []
        var cursor: String?
        repeat {
            var url = path + (path.contains("?") ? "&" : "?") + "limit=\(limit)"
            if let cursor { url += "&cursor=\(cursor)" }
            let page = try await page(url, token: token, of: Item.self)
            items += page.items
            cursor = page.next
        } while cursor != nil
        return items
    }

    /// Walks every page of a list of notes.
    func walk(_ path: String, token: String, limit: Int = 50) async throws -> [API.Note] {
        try await walk(path, token: token, limit: limit, of: API.Note.self)
    }

    /// The ids of a list's notes, all pages.
    func ids(_ path: String, token: String) async throws -> [String] {
        try await walk(path, token: token).map(\.id)
    }
}

/// Percent-encodes a query value so every character but the unreserved ones travels escaped.
func queryValue(_ text: String) -> String {
    text.addingPercentEncoding(withAllowedCharacters: CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~,")) ?? text
}

enum NotesFixture {
    /// Inserts generated notes as the owner with the event trigger off (generated rows need
    /// no change events, and the trigger would take minutes over 100,000 of them; ALTER TABLE
    /// holds its lock until commit, so no other session ever sees the triggers off).
    ///
    /// `insert(from, to)` is the INSERT … SELECT over `generate_series(from, to) g`. It runs
    /// in batches of `batch` rows, each a transaction of its own: the event log's horizon
    /// (and a new stream's first head) waits for every transaction that holds an xid, so one
    /// transaction of 200,000 rows, a minute or two on a loaded machine, stalled every other
    /// suite's event streams that long. The batches run in order on one session after
    /// `setseed(seed)`, so `random()` gives the same rows as one statement would.
    static func insertGenerated(
        count: Int, seed: Double, batch: Int = 10_000, on pool: PostgresPool,
        _ insert: (_ from: Int, _ to: Int) -> PostgresQuery
    ) async throws {
        try await pool.withConnection { connection in
            try await connection.query("SELECT setseed(\(seed))")
            for from in stride(from: 1, through: count, by: batch) {
                try await connection.execute(unsafeSQL: "BEGIN")
                try await connection.execute(unsafeSQL: "ALTER TABLE notes DISABLE TRIGGER USER")
                try await connection.query(insert(from, min(count, from + batch - 1)))
                try await connection.execute(unsafeSQL: "ALTER TABLE notes ENABLE TRIGGER USER")
                try await connection.execute(unsafeSQL: "COMMIT")
            }
        }
    }

    /// Inserts `count` users named `<prefix>1`, `<prefix>2`, … into the tenant as the owner,
    /// without a usable password (they never log in), and returns their ids in that order.
    static func insertUsers(tenantID: Int64, prefix: String, count: Int, on pool: PostgresPool) async throws -> [Int64] {
        try await pool.query("""
            INSERT INTO users (tenant_id, username, password_hash)
            SELECT \(tenantID), \(prefix) || g, 'not a hash' FROM generate_series(1, \(count)) g
            RETURNING id
            """).map { try $0.decode(Int64.self, column: 0) }
    }

    /// The id of the tenant with `slug`.
    static func tenantID(_ slug: String) async throws -> Int64 {
        try await TestEnvironment.ownerScalar("SELECT id FROM tenants WHERE slug = \(slug)", as: Int64.self)
    }

    /// How many notes the tenant holds, counted as the owner (past row-level security).
    static func noteCount(_ slug: String) async throws -> Int {
        try await TestEnvironment.ownerScalar(
            "SELECT count(*) FROM notes n JOIN tenants t ON t.id = n.tenant_id WHERE t.slug = \(slug)", as: Int.self)
    }

    /// Creates a place as the owner (places have no API yet) and returns its id as the API spells it.
    static func makePlace(_ slug: String, name: String = "Somewhere", lat: Double = 0, lng: Double = 0) async throws -> String {
        let id = try await TestEnvironment.ownerScalar("""
            INSERT INTO places (tenant_id, name, location, kind)
            SELECT id, \(name), ST_SetSRID(ST_MakePoint(\(lng), \(lat)), 4326)::geography, 'default'
            FROM tenants WHERE slug = \(slug)
            RETURNING id
            """, as: Int64.self)
        return String(id)
    }

    /// PostGIS' own spheroid distance from `(lat, lng)` to each note of the tenant, by id.
    static func distances(_ slug: String, lat: Double, lng: Double) async throws -> [String: Double] {
        try await TestEnvironment.withOwnerPool { pool in
            let rows = try await pool.query("""
                SELECT n.id, ST_Distance(n.location, ST_SetSRID(ST_MakePoint(\(lng), \(lat)), 4326)::geography)
                FROM notes n JOIN tenants t ON t.id = n.tenant_id WHERE t.slug = \(slug)
                """)
            var result: [String: Double] = [:]
            for row in rows {
                let (id, distance) = try row.decode((Int64, Double).self)
                result[String(id)] = distance
            }
            return result
        }
    }

    /// Every note's body in the tenant, by id.
    static func bodies(_ slug: String) async throws -> [String: String] {
        try await TestEnvironment.withOwnerPool { pool in
            let rows = try await pool.query("""
                SELECT n.id, n.body FROM notes n JOIN tenants t ON t.id = n.tenant_id WHERE t.slug = \(slug)
                """)
            var result: [String: String] = [:]
            for row in rows {
                let (id, body) = try row.decode((Int64, String).self)
                result[String(id)] = body
            }
            return result
        }
    }

    /// The point `distance` metres from `(lat, lng)` along `azimuth` degrees, on the spheroid (PostGIS' ST_Project).
    static func project(lat: Double, lng: Double, distance: Double, azimuth: Double) async throws -> (lat: Double, lng: Double) {
        try await TestEnvironment.withOwnerPool { pool in
            let rows = try await pool.query("""
                SELECT ST_Y(p::geometry), ST_X(p::geometry)
                FROM (SELECT ST_Project(ST_SetSRID(ST_MakePoint(\(lng), \(lat)), 4326)::geography, \(distance), radians(\(azimuth))) AS p) projected
                """)
            let (lat, lng) = try rows[0].decode((Double, Double).self)
            return (lat, lng)
        }
    }
}
