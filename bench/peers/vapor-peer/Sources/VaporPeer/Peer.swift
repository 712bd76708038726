// The benchmark's peer: GET /v1/notes?near= and POST /v1/notes of Landmark Remark, written
// the way a plain Vapor 4 + postgres-nio app would write them (bench/README.md, "The Vapor
// peer"). Same table, same index, same JSON; none of the service's safeguards: no
// authentication, no row-level security (it connects as the tables' owner), no fair
// shares, no idempotency keys, no ETags, no event fan-out beyond what the table's own
// triggers do.
//
// Environment: PEER_PORT (8090), PEER_DB_SOCKET (the socket file, .../.s.PGSQL.<port>),
// PEER_DB_USER (landmark_owner), PEER_DB_NAME (landmark_remark), LR_DB_POOL_SIZE (16),
// PEER_TENANT (bench), PEER_USERNAME (benchseed: the author of every created note).
import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import Vapor

struct Author: Content {
    let id: String
    let username: String
}

/// A note, keyed and formatted as the service writes it: ids as strings, `place_id` always
/// present (null when unset), `distance_m` only for a nearest list, keys sorted.
struct NoteJSON: Content {
    let id: String
    let body: String
    let lat: Double
    let lng: Double
    let author: Author
    let isMine: Bool
    let visibility: String
    let placeID: String?
    let createdAt: Date
    let updatedAt: Date
    let distance: Double?

    enum CodingKeys: String, CodingKey {
        case id, body, lat, lng, author, visibility
        case isMine = "is_mine", placeID = "place_id", createdAt = "created_at", updatedAt = "updated_at"
        case distance = "distance_m"
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(body, forKey: .body)
        try c.encode(lat, forKey: .lat)
        try c.encode(lng, forKey: .lng)
        try c.encode(author, forKey: .author)
        try c.encode(isMine, forKey: .isMine)
        try c.encode(visibility, forKey: .visibility)
        try c.encode(placeID, forKey: .placeID)  // null, not absent
        try c.encode(createdAt, forKey: .createdAt)
        try c.encode(updatedAt, forKey: .updatedAt)
        try c.encodeIfPresent(distance.map { ($0 * 10).rounded() / 10 }, forKey: .distance)
    }
}

struct NearQuery: Content {
    let near: String
    let limit: Int?
    let radiusM: Double?

    enum CodingKeys: String, CodingKey {
        case near, limit, radiusM = "radius_m"
    }
}

struct CreateNote: Content {
    let body: String
    let lat: Double
    let lng: Double
}

struct Peer: Sendable {
    let db: PostgresClient
    let tenantID: Int64
    let author: (id: Int64, username: String)

    func nearest(_ req: Request) async throws -> Response {
        // One parse of the query string (each `req.query[_, at:]` parses all of it again).
        let query = try req.query.decode(NearQuery.self)
        let parts = query.near.split(separator: ",").compactMap { Double($0) }
        guard parts.count == 2, (-90...90).contains(parts[0]), (-180...180).contains(parts[1]) else {
            throw Abort(.badRequest, reason: "near must be lat,lng")
        }
        let (lat, lng) = (parts[0], parts[1])
        let limit = min(max(query.limit ?? 50, 1), 200)
        let radius = query.radiusM ?? 20_000_000
        // KNN over notes_location (GiST on (tenant_id, location)), public notes only, then
        // the usernames. The join goes outside the LIMIT: written as one flat join, the
        // planner (which expects 9 rows within 10 km, not 12,000) hash-joins every note in
        // range and sorts them all, 330 ms in London on the quick data. The page is then
        // sorted by spheroid distance and id, as the service sorts it (`<->` on geography
        // orders on the sphere).
        let rows = try await db.query("""
            SELECT n.id, n.body, ST_Y(n.location::geometry), ST_X(n.location::geometry), n.user_id, u.username,
                   n.visibility, n.place_id, n.created_at, n.updated_at, n.distance
            FROM (
                SELECT *, ST_Distance(location, ST_SetSRID(ST_MakePoint(\(lng), \(lat)), 4326)::geography) AS distance
                FROM notes
                WHERE tenant_id = \(tenantID) AND visibility = 'public'
                  AND ST_DWithin(location, ST_SetSRID(ST_MakePoint(\(lng), \(lat)), 4326)::geography, \(radius))
                ORDER BY location <-> ST_SetSRID(ST_MakePoint(\(lng), \(lat)), 4326)::geography
                LIMIT \(limit + 1)
            ) n
            JOIN users u ON u.tenant_id = n.tenant_id AND u.id = n.user_id
            ORDER BY n.distance, n.id
            """, logger: req.logger)
        // Each row decoded column by column (a tuple's decode looks up its generic metadata
        // on every row), and the page written straight into the response's buffer in the
        // service's key order (JSONEncoder builds each object as a dictionary first: 38 % of
        // this peer's CPU per page in its profile, bench/results/2026-11-30-signed-tokens.md).
        var json = PageWriter(allocator: req.byteBufferAllocator)
        var count = 0
        var last: (distance: Double, id: Int64)?
        for try await row in rows {
            if count == limit {
                json.more = true
                continue
            }
            var cells = row.makeIterator()
            func next<T: PostgresDecodable>(_: T.Type) throws -> T { try cells.next()!.decode(T.self) }
            let id = try next(Int64.self)
            let body = try next(String.self)
            let lat = try next(Double.self)
            let lng = try next(Double.self)
            let userID = try next(Int64.self)
            let username = try next(String.self)
            let visibility = try next(String.self)
            let placeID = try next(Int64?.self)
            let createdAt = try next(Date.self)
            let updatedAt = try next(Date.self)
            let distance = try next(Double.self)
            json.note(
                id: id, body: body, lat: lat, lng: lng, userID: userID, username: username, isMine: false, visibility: visibility,
                placeID: placeID, createdAt: createdAt, updatedAt: updatedAt, distance: distance)
            count += 1
            last = (distance, id)
        }
        // Opaque to clients, as the service's is; this peer does not read it back.
        let cursor = json.more ? last.map { Data("\($0.distance),\($0.id)".utf8).base64EncodedString() } : nil
        return json.response(nextCursor: cursor)
    }

    func create(_ req: Request) async throws -> Response {
        let input = try req.content.decode(CreateNote.self)
        let body = input.body.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...500).contains(body.count), (-90...90).contains(input.lat), (-180...180).contains(input.lng) else {
            throw Abort(.unprocessableEntity, reason: "body: 1 to 500 characters; lat, lng: in range")
        }
        let rows = try await db.query("""
            INSERT INTO notes (tenant_id, user_id, body, location)
            VALUES (\(tenantID), \(author.id), \(body), ST_SetSRID(ST_MakePoint(\(input.lng), \(input.lat)), 4326)::geography)
            RETURNING id, body, ST_Y(location::geometry), ST_X(location::geometry), visibility, place_id, created_at, updated_at
            """, logger: req.logger)
        var note: NoteJSON?
        for try await (id, body, lat, lng, visibility, placeID, createdAt, updatedAt)
            in rows.decode((Int64, String, Double, Double, String, Int64?, Date, Date).self)
        {
            note = NoteJSON(
                id: String(id), body: body, lat: lat, lng: lng,
                author: Author(id: String(author.id), username: author.username), isMine: true,
                visibility: visibility, placeID: placeID.map(String.init), createdAt: createdAt, updatedAt: updatedAt,
                distance: nil)
        }
        guard let note else { throw Abort(.internalServerError) }
        let response = try await note.encodeResponse(status: .created, for: req)
        response.headers.replaceOrAdd(name: .location, value: "/v1/notes/\(note.id)")
        return response
    }
}

@main
enum Entrypoint {
    static func main() async throws {
        // As Vapor's template does: Swift Concurrency's jobs run on NIO's event loops, so an
        // async handler does not hop between two thread pools (a task switch each way was
        // 8 % of the first version's profile, bench/results/2026-11-29-quick-partial-peers.md).
        _ = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        let env = ProcessInfo.processInfo.environment
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .warning
            return handler
        }
        var logger = Logger(label: "vapor-peer")
        logger.logLevel = .warning

        // The service's JSON but for the keys' order, which no client reads (sorting them was
        // most of the encoder's cost, 14 % of the first version's profile): slashes as is,
        // RFC 3339 UTC with milliseconds.
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        let timestamp = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var c = encoder.singleValueContainer()
            try c.encode(date.formatted(timestamp))
        }
        ContentConfiguration.global.use(encoder: encoder, for: .json)

        var config = PostgresClient.Configuration(
            unixSocketPath: env["PEER_DB_SOCKET"] ?? "/tmp/.s.PGSQL.5432",
            username: env["PEER_DB_USER"] ?? "landmark_owner", password: nil,
            database: env["PEER_DB_NAME"] ?? "landmark_remark")
        config.options.maximumConnections = Int(env["LR_DB_POOL_SIZE"] ?? "") ?? 16
        let db = PostgresClient(configuration: config, backgroundLogger: logger)

        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { await db.run() }

            let tenantSlug = env["PEER_TENANT"] ?? "bench"
            let username = env["PEER_USERNAME"] ?? "benchseed"
            var ids: (tenant: Int64, user: Int64)?
            for try await (tenant, user) in try await db.query("""
                SELECT t.id, u.id FROM tenants t JOIN users u ON u.tenant_id = t.id
                WHERE t.slug = \(tenantSlug) AND u.username = \(username)
                """).decode((Int64, Int64).self) {
                ids = (tenant, user)
            }
            guard let ids else { throw Abort(.internalServerError, reason: "no user \(username) in tenant \(tenantSlug)") }
            let peer = Peer(db: db, tenantID: ids.tenant, author: (ids.user, username))

            // No command-line parsing: `serve`, configured here.
            let app = try await Application.make(Environment(name: "production", arguments: ["vapor-peer"]))
            app.logger.logLevel = .warning
            app.http.server.configuration.hostname = "127.0.0.1"
            app.http.server.configuration.port = Int(env["PEER_PORT"] ?? "") ?? 8090
            app.get("v1", "notes") { req async throws -> Response in try await peer.nearest(req) }
            app.post("v1", "notes") { req async throws -> Response in try await peer.create(req) }
            app.get("healthz") { _ in "ok" }
            do {
                try await app.execute()
            } catch {
                try? await app.asyncShutdown()
                throw error
            }
            try await app.asyncShutdown()
            group.cancelAll()
        }
    }
}
