import Foundation
import HummingbirdTesting
import LandmarkRemark
import Testing

/// Blocks (issue 34): `PUT`/`DELETE /v1/me/blocks/{username}` and `GET /v1/me/blocks`, and a
/// block hiding each user's notes from the other on every read path, at once, both ways.
@Suite(.timeLimit(.minutes(10))) struct BlocksTests {
    /// What `viewer` sees of `note` (by `author`, at `place`), one read path after another:
    /// `true` where it shows. Each would show it without the block logic of its statement.
    /// The counts are of both notes, the viewer's own and the author's.
    static func sightings(
        _ client: some TestClientProtocol, note: String, word: String, place: String, author: Account, viewer: Account
    ) async throws -> [String: Bool] {
        let token = viewer.accessToken
        func listed(_ path: String) async throws -> Bool {
            try await client.ids(path, token: token).contains(note)
        }
        func clustered(_ path: String) async throws -> Bool {
            let clusters = try await client.call(.get, path, token: token).decode(API.ClusterList.self).clusters
            return clusters.reduce(0) { $0 + $1.count } == 2
        }
        func userNotes() async throws -> Bool {
            let path = "/v1/users/\(author.username)/notes"
            guard try await client.call(.get, path, token: token).status == .ok else { return false }
            return try await listed(path)
        }
        let placeCount = try await client.call(.get, "/v1/places/\(place)", token: token).decode(API.Place.self).noteCount
        return [
            "newest": try await listed("/v1/notes"),
            "nearest": try await listed("/v1/notes?near=-33.86,151.21"),
            "nearest within": try await listed("/v1/notes?near=-33.86,151.21&radius_m=5000"),
            "viewport": try await listed("/v1/notes?bbox=151,-34,152,-33"),
            "search body": try await listed("/v1/notes?q=\(word)&in=body"),
            "search username": try await listed("/v1/notes?q=\(author.username)&in=username"),
            "search nearest": try await listed("/v1/notes?q=\(word)&near=-33.86,151.21"),
            "author=": try await listed("/v1/notes?author=\(author.username)"),
            "place_id=": try await listed("/v1/notes?place_id=\(place)"),
            // 404 once blocked, as for no such user.
            "user's notes": try await userNotes(),
            "single": try await client.call(.get, "/v1/notes/\(note)", token: token).status == .ok,
            "profile": try await client.call(.get, "/v1/users/\(author.username)", token: token).status == .ok,
            "clusters from the grid": try await clustered("/v1/notes/clusters?bbox=150,-35,152,-33&zoom=3"),
            "clusters live": try await clustered("/v1/notes/clusters?bbox=150,-35,152,-33&zoom=3&q=the&in=body"),
            "place note_count": placeCount == 2,
        ]
    }

    @Test func aBlockHidesEachUsersNotesFromTheOtherOnEveryReadPathUntilUnblocked() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let author = try await client.signup("keeper_b", tenant: tenant)
            let viewer = try await client.signup("viewer_b", tenant: tenant)
            let place = try await client.createPlace(viewer, "Hornby", lat: -33.83, lng: 151.28).id
            let authorsNote = try await client.createNote(author, "the lighthouse at dusk", lat: -33.86, lng: 151.21, placeID: place).id
            let viewersNote = try await client.createNote(viewer, "the ferry at dawn", lat: -33.86, lng: 151.21, placeID: place).id
            func bothWays() async throws -> [String: Bool] {
                let seen = try await Self.sightings(
                    client, note: authorsNote, word: "lighthouse", place: place, author: author, viewer: viewer)
                let seenBack = try await Self.sightings(
                    client, note: viewersNote, word: "ferry", place: place, author: viewer, viewer: author)
                return seen.merging(seenBack.map { ("back: " + $0.key, $0.value) }) { a, _ in a }
            }
            let before = try await bothWays()
            #expect(before.values.allSatisfy { $0 }, "\(before.filter { !$0.value })")

            #expect(try await client.call(.put, "/v1/me/blocks/KEEPER_B", token: viewer.accessToken).status == .noContent)
            let blocked = try await bothWays()
            #expect(blocked.values.allSatisfy { !$0 }, "\(blocked.filter { $0.value })")
            // Nor changeable: as if it did not exist, not "someone else's".
            #expect(try await client.call(.patch, "/v1/notes/\(authorsNote)", json: ["body": "x"], token: viewer.accessToken).status == .notFound)
            #expect(try await client.call(.delete, "/v1/notes/\(viewersNote)", token: author.accessToken).status == .notFound)
            // Their own notes stay theirs to see.
            #expect(try await client.call(.get, "/v1/notes/\(authorsNote)", token: author.accessToken).status == .ok)

            #expect(try await client.call(.delete, "/v1/me/blocks/keeper_b", token: viewer.accessToken).status == .noContent)
            let after = try await bothWays()
            #expect(after == before, "\(after.filter { !$0.value })")
        }
    }

    @Test func blockingIsIdempotentAndRefusesWhatItCannotBlock() async throws {
        let (tenant, other) = (try await TestEnvironment.makeTenant(), try await TestEnvironment.makeTenant())
        try await withApp({ $0.safety.blocksPerUser = 2 }) { client in
            let me = try await client.signup("blocker_i", tenant: tenant)
            let names = ["first_i", "second_i", "third_i"]
            for name in names { _ = try await client.signup(name, tenant: tenant) }
            _ = try await client.signup("stranger_i", tenant: other)
            func put(_ name: String) async throws -> APIResponse {
                try await client.call(.put, "/v1/me/blocks/\(name)", token: me.accessToken)
            }
            func listed() async throws -> [String] {
                try await client.call(.get, "/v1/me/blocks", token: me.accessToken).decode(API.BlockPage.self).items.map(\.username)
            }
            #expect(try await put("first_i").status == .noContent)
            #expect(try await put("first_i").status == .noContent)
            #expect(try await listed() == ["first_i"])
            #expect(try await put("blocker_i").code == "cannot_block_self")
            #expect(try await put("nobody_here").code == "not_found")
            #expect(try await put("stranger_i").code == "not_found")  // another tenant's
            #expect(try await put("a%20b").code == "not_found")
            #expect(try await put("%27%20OR%201%3D1--").code == "not_found")
            #expect(try await client.call(.put, "/v1/me/blocks/first_i").status == .unauthorized)
            #expect(try await put("second_i").status == .noContent)
            let third = try await put("third_i")
            #expect(third.code == "too_many_blocks")
            #expect(third.errorFields == ["username"])
            // Blocking one already blocked is not one more.
            #expect(try await put("second_i").status == .noContent)
            #expect(try await listed() == ["second_i", "first_i"])
            #expect(try await client.call(.delete, "/v1/me/blocks/third_i", token: me.accessToken).status == .noContent)
            #expect(try await client.call(.delete, "/v1/me/blocks/nobody_here", token: me.accessToken).code == "not_found")
            #expect(try await client.call(.delete, "/v1/me/blocks/first_i", token: me.accessToken).status == .noContent)
            #expect(try await listed() == ["second_i"])
        }
    }

    /// Twenty blocks at once against a limit of five: the blocker's row is locked while
    /// counting, so exactly five land.
    @Test func theLimitHoldsUnderConcurrentBlocks() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp({ $0.safety.blocksPerUser = 5 }) { client in
            let me = try await client.signup("racer_c", tenant: tenant)
            for index in 0..<20 { _ = try await client.signup("target_c\(index)", tenant: tenant) }
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<20 {
                    group.addTask { try await client.call(.put, "/v1/me/blocks/target_c\(index)", token: me.accessToken).status.code }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 204 }.count == 5, "\(statuses)")
            #expect(statuses.filter { $0 == 422 }.count == 15, "\(statuses)")
            let page = try await client.call(.get, "/v1/me/blocks?limit=200", token: me.accessToken).decode(API.BlockPage.self)
            #expect(page.items.count == 5)
        }
    }

    @Test func theListIsNewestFirstInPagesWithItsOwnCursor() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let me = try await client.signup("lister_p", tenant: tenant)
            for name in ["one_p", "two_p", "three_p"] {
                _ = try await client.signup(name, tenant: tenant)
                #expect(try await client.call(.put, "/v1/me/blocks/\(name)", token: me.accessToken).status == .noContent)
            }
            let first = try await client.call(.get, "/v1/me/blocks?limit=2", token: me.accessToken).decode(API.BlockPage.self)
            #expect(first.items.map(\.username) == ["three_p", "two_p"])
            let cursor = try #require(first.nextCursor)
            let second = try await client.call(.get, "/v1/me/blocks?limit=2&cursor=\(cursor)", token: me.accessToken)
                .decode(API.BlockPage.self)
            #expect(second.items.map(\.username) == ["one_p"])
            #expect(second.nextCursor == nil)
            // A tampered cursor, unknown parameters and a limit out of range are refused.
            #expect(try await client.call(.get, "/v1/me/blocks?cursor=\(cursor)x", token: me.accessToken).status == .badRequest)
            #expect(try await client.call(.get, "/v1/me/blocks?sort=asc", token: me.accessToken).status == .badRequest)
            #expect(try await client.call(.get, "/v1/me/blocks?limit=201", token: me.accessToken).status == .badRequest)
        }
    }

    @Test func deletingEitherAccountRemovesTheBlock() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        let tenantID = try await NotesFixture.tenantID(tenant)
        try await withApp { client in
            let me = try await client.signup("leaver_d", tenant: tenant)
            _ = try await client.signup("stayer_d", tenant: tenant)
            let third = try await client.signup("third_d", tenant: tenant)
            #expect(try await client.call(.put, "/v1/me/blocks/stayer_d", token: me.accessToken).status == .noContent)
            #expect(try await client.call(.put, "/v1/me/blocks/leaver_d", token: third.accessToken).status == .noContent)
            func blocks() async throws -> Int {
                try await TestEnvironment.withOwnerPool {
                    try await $0.query("SELECT count(*) FROM blocks WHERE tenant_id = \(tenantID)")[0].decode(Int.self, column: 0)
                }
            }
            #expect(try await blocks() == 2)
            let deleted = try await client.call(.delete, "/v1/me", json: ["password": me.password], token: me.accessToken)
            #expect(deleted.status == .noContent, "\(deleted.body)")
            #expect(try await blocks() == 0)
        }
    }
}
