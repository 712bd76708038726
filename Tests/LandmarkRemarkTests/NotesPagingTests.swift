import Credentials
import Foundation
import HTTPTypes
import HummingbirdTesting
@testable import LandmarkRemark
import Postgres
import Testing

/// Keyset pagination: every note exactly once, in order, while others write.
@Suite(.timeLimit(.minutes(10))) struct NotesPagingTests {
    static let origin = (lat: -33.8, lng: 151.2)

    /// 1,000 notes by three users, inserted directly for speed: a tenth of them at the
    /// very same spot (equal distances), created in groups of four at the same
    /// microsecond (equal timestamps), every seventh private.
    static func seed(tenant: String, authors: [Account]) async throws {
        let tenantID = try await NotesFixture.tenantID(tenant)
        let userIDs = authors.map { Int64($0.userID)! }
        try await TestEnvironment.withOwnerPool { pool in
            try await pool.query("""
                INSERT INTO notes (tenant_id, user_id, body, location, visibility, created_at, updated_at)
                SELECT \(tenantID), (\(userIDs))[1 + g % 3], 'seeded note ' || g,
                       ST_SetSRID(ST_MakePoint(
                           \(origin.lng) + CASE WHEN g % 10 = 0 THEN 0 ELSE random() - 0.5 END,
                           \(origin.lat) + CASE WHEN g % 10 = 0 THEN 0 ELSE random() - 0.5 END), 4326)::geography,
                       CASE WHEN g % 7 = 0 THEN 'private' ELSE 'public' END,
                       stamp, stamp
                FROM generate_series(1, 1000) g,
                     LATERAL (SELECT now() - interval '1 day' + (g / 4) * interval '1 second' AS stamp) s
                """)
        }
    }

    /// The order the API must produce, computed by PostGIS as the owner.
    static func expected(tenant: String, viewer: Account, nearest: Bool) async throws -> [String] {
        let tenantID = try await NotesFixture.tenantID(tenant)
        let order: PostgresQuery = nearest
            ? "ST_Distance(location, ST_SetSRID(ST_MakePoint(\(origin.lng), \(origin.lat)), 4326)::geography), id"
            : "created_at DESC, id DESC"
        return try await TestEnvironment.withOwnerPool { pool in
            try await pool.query("""
                SELECT id FROM notes
                WHERE tenant_id = \(tenantID) AND (visibility = 'public' OR user_id = \(Int64(viewer.userID)!))
                ORDER BY \(order)
                """).map { String(try $0.decode(Int64.self, column: 0)) }
        }
    }

    @Test(arguments: [false, true]) func walkingAllPagesSeesEachNoteOnceWhileOthersWrite(nearest: Bool) async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let alice = try await client.signup("alice", tenant: tenant)
            let bob = try await client.signup("bob", tenant: tenant)
            let carol = try await client.signup("carol", tenant: tenant)
            try await Self.seed(tenant: tenant, authors: [alice, bob, carol])
            let expected = try await Self.expected(tenant: tenant, viewer: alice, nearest: nearest)
            #expect(expected.count > 900)
            let original = Set(expected)

            let base = nearest ? "/v1/notes?near=\(Self.origin.lat),\(Self.origin.lng)&limit=7" : "/v1/notes?limit=7"
            var seen: [String] = []
            var cursor: String?
            var pages = 0
            repeat {
                let page = try await client.page(base + (cursor.map { "&cursor=\($0)" } ?? ""), token: alice.accessToken)
                #expect(page.items.count == 7 || page.next == nil)
                seen += page.items.map(\.id)
                cursor = page.next
                pages += 1
                if pages % 10 == 0 {
                    // Writes while walking: at the origin (before the cursor when nearest),
                    // somewhere in the area (anywhere in the order), and brand new (newest first).
                    try await client.createNote(bob, "written while walking", lat: Self.origin.lat, lng: Self.origin.lng)
                    try await client.createNote(carol, "also written", lat: Self.origin.lat + 0.1, lng: Self.origin.lng - 0.2)
                }
            } while cursor != nil
            #expect(seen.count == Set(seen).count, "a note was repeated")
            #expect(seen.filter(original.contains) == expected, "originals were skipped or out of order")
            #expect(pages >= expected.count / 7)
        }
    }

    @Test func cursorsAreOpaqueAndTamperSafe() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        let other = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let alice = try await client.signup("alice", tenant: tenant)
            let bob = try await client.signup("bob", tenant: tenant)
            let carol = try await client.signup("carol", tenant: other)
            for index in 0..<5 {
                try await client.createNote(alice, "alice \(index)", lat: 0, lng: Double(index))
                try await client.createNote(bob, "bob private \(index)", lat: 0, lng: Double(index), visibility: "private")
                try await client.createNote(carol, "carol \(index)", lat: 0, lng: Double(index))
            }
            let newest = try await client.page("/v1/notes?limit=2", token: alice.accessToken)
            let newestCursor = try #require(newest.next)
            let nearest = try await client.page("/v1/notes?near=0,0&limit=2", token: alice.accessToken)
            let nearestCursor = try #require(nearest.next)
            #expect(nearestCursor.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })

            let refused = [
                "/v1/notes?cursor=garbage", "/v1/notes?cursor=", "/v1/notes?cursor=\(newestCursor)x",
                "/v1/notes?cursor=\(newestCursor.dropLast())", "/v1/notes?cursor=\(newestCursor)%3D%3D",
                "/v1/notes?near=0,0&cursor=\(newestCursor)", "/v1/notes?cursor=\(nearestCursor)",
                "/v1/notes?near=0,1&cursor=\(nearestCursor)", "/v1/notes?q=alice&cursor=\(newestCursor)",
                "/v1/notes?author=me&cursor=\(newestCursor)", "/v1/users/alice/notes?cursor=\(newestCursor)",
                "/v1/notes?cursor=\(Base64URL.encode([UInt8](repeating: 0xFF, count: 26)))",
            ]
            for path in refused {
                let response = try await client.call(.get, path, token: alice.accessToken)
                #expect(response.status == .badRequest, "\(path)")
                #expect(response.code == "malformed_request")
                #expect(response.detail?.contains("cursor") == true)
            }
            // The same query with a limit of its own keeps its cursor.
            #expect(try await client.call(.get, "/v1/notes?limit=3&cursor=\(newestCursor)", token: alice.accessToken).status == .ok)

            // Forged cursors that decode are only positions in what the caller may see anyway.
            let fingerprint = NoteFilters().fingerprint
            var near = NoteFilters()
            near.near = .init(lat: 0, lng: 0)
            // How many notes each page holds (alice's 5 public ones are all she may see besides
            // her own: bob's are private): without it, an empty page would pass as well.
            let forged: [(String, String, ClosedRange<Int>)] = [
                ("/v1/notes?limit=200", KeysetCursor(key: .newest(createdMicros: (1 << 53) - 1, id: Int64.max)).encoded(fingerprint: fingerprint), 5...5),
                ("/v1/notes?limit=200", KeysetCursor(key: .newest(createdMicros: 0, id: 1)).encoded(fingerprint: fingerprint), 0...0),
                // After (0 m, id 1): all five, or four if alice's note at 0,0 happens to have id 1.
                ("/v1/notes?near=0,0&limit=200", KeysetCursor(key: .nearest(distance: 0, id: 1)).encoded(fingerprint: near.fingerprint), 4...5),
            ]
            for (path, cursor, count) in forged {
                let page = try await client.page(path + "&cursor=\(cursor)", token: alice.accessToken)
                #expect(count.contains(page.items.count), "\(path): \(page.items.count) notes")
                #expect(page.items.allSatisfy { $0.author.username == "alice" })
            }
            for (key, nearest) in [
                (KeysetCursor.Key.nearest(distance: -1, id: 1), true), (.nearest(distance: .infinity, id: 1), true),
                (.nearest(distance: .nan, id: 1), true), (.newest(createdMicros: -1, id: 1), false),
                (.newest(createdMicros: Int64.max, id: 1), false), (.newest(createdMicros: 0, id: 0), false),
            ] {
                let encoded = KeysetCursor(key: key).encoded(fingerprint: nearest ? near.fingerprint : fingerprint)
                let path = nearest ? "/v1/notes?near=0,0&cursor=\(encoded)" : "/v1/notes?cursor=\(encoded)"
                let response = try await client.call(.get, path, token: alice.accessToken)
                #expect(response.status == .badRequest, "\(key)")
            }
            // A cursor from another tenant's walk moves within the caller's own tenant only.
            let carolPage = try await client.page("/v1/notes?limit=2", token: carol.accessToken)
            let fromCarol = try await client.page("/v1/notes?limit=200&cursor=\(try #require(carolPage.next))", token: alice.accessToken)
            #expect(!fromCarol.items.isEmpty, "alice's notes older than carol's position")
            #expect(fromCarol.items.allSatisfy { $0.author.username == "alice" })
        }
    }

    @Test func limits() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let alice = try await client.signup("alice", tenant: tenant)
            for index in 0..<3 { try await client.createNote(alice, "n\(index)", lat: 0, lng: 0) }
            let one = try await client.page("/v1/notes?limit=1", token: alice.accessToken)
            #expect(one.items.count == 1 && one.next != nil)
            let all = try await client.page("/v1/notes?limit=200", token: alice.accessToken)
            #expect(all.items.count == 3 && all.next == nil)
            let plain = try await client.call(.get, "/v1/notes", token: alice.accessToken)
            #expect(try plain.decode(API.NotePage.self).nextCursor == nil)
            #expect(plain.jsonValue["next_cursor"] == .null, "next_cursor is present and null on the last page")
            for bad in ["0", "201", "-1", "abc", "1.5", "", "99999999999999999999"] {
                let response = try await client.call(.get, "/v1/notes?limit=\(bad)", token: alice.accessToken)
                #expect(response.status == .badRequest, "limit=\(bad)")
                #expect(response.detail?.contains("limit") == true)
            }
        }
    }
}
