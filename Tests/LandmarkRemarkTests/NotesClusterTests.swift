import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

/// Map clusters on the tile grid of the zoom level.
@Suite(.timeLimit(.minutes(10))) struct NotesClusterTests {
    func clusters(_ client: some TestClientProtocol, _ query: String, token: String) async throws -> [API.Cluster] {
        let response = try await client.call(.get, "/v1/notes/clusters?" + query, token: token)
        #expect(response.status == .ok, "\(query): \(response.body)")
        return try response.decode(API.ClusterList.self).clusters
    }

    @Test func notesGroupByZoomAndSinglesCarryTheirID() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let alice = try await client.signup("alice", tenant: tenant)
            let bob = try await client.signup("bob", tenant: tenant)
            for index in 0..<5 { try await client.createNote(alice, "pile \(index)", lat: -33.8688, lng: 151.2093) }
            for index in 0..<3 { try await client.createNote(bob, "around \(index)", lat: -33.87 + Double(index) * 0.01, lng: 151.21) }
            let london = try await client.createNote(alice, "london", lat: 51.5072, lng: -0.1276).id
            try await client.createNote(bob, "hidden", lat: 51.5, lng: -0.12, visibility: "private")

            // Zoomed out: Sydney is one cluster, London a single note.
            let world = try await clusters(client, "bbox=-180,-90,180,90&zoom=2", token: alice.accessToken)
            #expect(world.count == 2)
            #expect(world.first?.count == 8, "largest first")
            #expect(world.first?.noteID == nil)
            let single = try #require(world.last)
            #expect(single.count == 1)
            #expect(single.noteID == london)
            #expect(single.lat == 51.5072)
            #expect(single.lng == -0.1276)
            let sydney = try #require(world.first)
            #expect(abs(sydney.lat - (-33.8688 * 5 - 33.87 - 33.86 - 33.85) / 8) < 1e-9, "at the mean position")

            // Zoomed right in: the pile at one spot stays one cluster; the others part.
            let street = try await clusters(client, "bbox=151.205,-33.875,151.215,-33.845&zoom=18", token: alice.accessToken)
            #expect(street.map(\.count).sorted() == [1, 1, 1, 5])
            #expect(street.filter { $0.noteID != nil }.count == 3)

            // The list's filters apply.
            let mine = try await clusters(client, "bbox=-180,-90,180,90&zoom=0&author=me", token: alice.accessToken)
            #expect(mine.map(\.count).reduce(0, +) == 6)
            let searched = try await clusters(client, "bbox=-180,-90,180,90&zoom=0&q=around", token: alice.accessToken)
            #expect(searched.map(\.count) == [3])
            let nearby = try await clusters(client, "bbox=-180,-90,180,90&zoom=0&near=51.5,-0.12&radius_m=10000", token: bob.accessToken)
            #expect(nearby.map(\.count) == [2], "bob's own private note counts for bob")
            let outside = try await clusters(client, "bbox=0,0,10,10&zoom=5", token: alice.accessToken)
            #expect(outside.isEmpty)
        }
    }

    @Test func cellsFollowTheTileGrid() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let alice = try await client.signup("alice", tenant: tenant)
            // At zoom 0 a cell is 90 degrees of longitude: these two share one, the third does not.
            try await client.createNote(alice, "a", lat: 10, lng: 1)
            try await client.createNote(alice, "b", lat: 20, lng: 89)
            try await client.createNote(alice, "c", lat: 10, lng: 91)
            let zoom0 = try await clusters(client, "bbox=-180,-90,180,90&zoom=0", token: alice.accessToken)
            #expect(zoom0.map(\.count).sorted() == [1, 2])
            // Either side of the antimeridian are different cells, both inside a crossing box.
            try await client.createNote(alice, "east", lat: 0, lng: 179.5)
            try await client.createNote(alice, "west", lat: 0, lng: -179.5)
            let crossing = try await clusters(client, "bbox=170,-10,-170,10&zoom=4", token: alice.accessToken)
            #expect(crossing.count == 2)
            #expect(Set(crossing.map(\.lng)) == [179.5, -179.5])
        }
    }

    @Test func badClusterRequestsAreMalformed() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let alice = try await client.signup("alice", tenant: tenant)
            let cases: [(String, String)] = [
                ("zoom=3", "bbox"), ("bbox=0,0,1,1", "zoom"), ("bbox=0,0,1,1&zoom=23", "zoom"), ("bbox=0,0,1,1&zoom=-1", "zoom"),
                ("bbox=0,0,1,1&zoom=abc", "zoom"), ("bbox=0,0,1,1&zoom=3&limit=5", "limit"), ("bbox=0,0,1,1&zoom=3&cursor=x", "cursor"),
                ("bbox=0,0,1,1&zoom=3&q=", "q"), ("bbox=0,0,1,1&zoom=3&radius_m=5", "radius_m"),
                ("bbox=0,0,1,1&zoom=3&author=%20", "author"),
            ]
            for (query, parameter) in cases {
                let response = try await client.call(.get, "/v1/notes/clusters?" + query, token: alice.accessToken)
                #expect(response.status == .badRequest, "\(query)")
                #expect(response.code == "malformed_request")
                #expect(response.detail?.contains(parameter) == true, "\(query): \(response.detail ?? "")")
            }
            // More grid cells than any screen shows: refused before it runs, saying what to do.
            for query in ["bbox=-180,-90,180,90&zoom=12", "bbox=-180,-85,180,85&zoom=5", "bbox=0,0,40,40&zoom=8"] {
                let response = try await client.call(.get, "/v1/notes/clusters?" + query, token: alice.accessToken)
                #expect(response.status == .unprocessableContent, "\(query)")
                #expect(response.code == "query_too_broad")
                #expect(response.detail?.contains("smaller box or a lower zoom") == true)
            }
        }
    }
}
