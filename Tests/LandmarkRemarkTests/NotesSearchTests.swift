import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

/// Substring search over bodies and usernames, with LIKE's special characters taken literally.
@Suite(.timeLimit(.minutes(10))) struct NotesSearchTests {
    /// A tenant with known notes; `ids[body]` is the id of the note with that body.
    struct World {
        let alice: Account
        let bob: Account
        let ids: [String: String]

        func ids(_ bodies: String...) -> Set<String> { Set(bodies.map { ids[$0]! }) }
    }

    static let aliceBodies = [
        "Great COFFEE here", "100% sure", "snake_case_name", #"back\slash path"#, #"it's "quoted""#,
        "☕️ espresso 🎉", "xy", "a plain note",
    ]
    static let bobBodies = ["coffee again", "percent % sign", "Bobcat sighting", "50%_off"]

    func world(_ client: some TestClientProtocol, tenant: String) async throws -> World {
        let alice = try await client.signup("alice_1", tenant: tenant)
        let bob = try await client.signup("Bobby", tenant: tenant)
        var ids: [String: String] = [:]
        for (index, body) in Self.aliceBodies.enumerated() {
            ids[body] = try await client.createNote(alice, body, lat: 0, lng: Double(index) / 100).id
        }
        for (index, body) in Self.bobBodies.enumerated() {
            ids[body] = try await client.createNote(bob, body, lat: 1, lng: Double(index) / 100).id
        }
        try await client.createNote(bob, "coffee, but private", lat: 1, lng: 1, visibility: "private")
        return World(alice: alice, bob: bob, ids: ids)
    }

    func search(_ client: some TestClientProtocol, _ query: String, as account: Account) async throws -> Set<String> {
        let ids = try await client.ids("/v1/notes?" + query, token: account.accessToken)
        #expect(ids.count == Set(ids).count)
        return Set(ids)
    }

    @Test func textSearchIsCaseInsensitiveAndLiteral() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let world = try await world(client, tenant: tenant)
            let alice = world.alice
            #expect(try await search(client, "q=coffee", as: alice) == world.ids("Great COFFEE here", "coffee again"))
            #expect(try await search(client, "q=CoFfEe&in=body", as: alice) == world.ids("Great COFFEE here", "coffee again"))
            // %, _ and \ match themselves: taken as wildcards, the empty ones would match.
            #expect(try await search(client, "q=\(queryValue("100%"))&in=body", as: alice) == world.ids("100% sure"))
            #expect(try await search(client, "q=\(queryValue("cent%sign"))&in=body", as: alice).isEmpty)
            #expect(try await search(client, "q=\(queryValue("cent % sig"))", as: alice) == world.ids("percent % sign"))
            #expect(try await search(client, "q=\(queryValue("50%_off"))", as: alice) == world.ids("50%_off"))
            #expect(try await search(client, "q=\(queryValue("ake_case"))&in=body", as: alice) == world.ids("snake_case_name"))
            #expect(try await search(client, "q=\(queryValue("sna_e"))&in=body", as: alice).isEmpty)
            #expect(try await search(client, "q=\(queryValue(#"back\s"#))", as: alice) == world.ids(#"back\slash path"#))
            #expect(try await search(client, "q=\(queryValue(#"back\\"#))", as: alice).isEmpty)
            #expect(try await search(client, "q=\(queryValue("'s \"quo"))", as: alice) == world.ids(#"it's "quoted""#))
            #expect(try await search(client, "q=\(queryValue("\"quoted\""))", as: alice) == world.ids(#"it's "quoted""#))
            #expect(try await search(client, "q=\(queryValue("☕️ espresso"))", as: alice) == world.ids("☕️ espresso 🎉"))
            #expect(try await search(client, "q=\(queryValue("espresso 🎉"))", as: alice) == world.ids("☕️ espresso 🎉"))
            #expect(try await search(client, "q=\(queryValue("a pla"))", as: alice) == world.ids("a plain note"))
            // `+` in a query string is a space, as forms send it.
            #expect(try await search(client, "q=a+plain", as: alice) == world.ids("a plain note"))
            #expect(try await search(client, "q=nothing-like-this", as: alice).isEmpty)
        }
    }

    @Test func usernameSearchAndAuthorFilters() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let world = try await world(client, tenant: tenant)
            let (alice, bob) = (world.alice, world.bob)
            let bobsPublic = Set(Self.bobBodies.map { world.ids[$0]! })
            let alicesNotes = Set(Self.aliceBodies.map { world.ids[$0]! })
            #expect(try await search(client, "q=bobby&in=username", as: alice) == bobsPublic)
            #expect(try await search(client, "q=OBB&in=username", as: alice) == bobsPublic)
            #expect(try await search(client, "q=bob&in=body", as: alice) == world.ids("Bobcat sighting"))
            #expect(try await search(client, "q=bob", as: alice) == bobsPublic, "in=all: body or username")
            #expect(try await search(client, "q=\(queryValue("_"))&in=username", as: alice) == alicesNotes, "alice_1 has the underscore")
            #expect(try await search(client, "q=\(queryValue("%_off"))", as: alice) == world.ids("50%_off"))
            #expect(try await search(client, "q=e_1&in=username", as: alice) == alicesNotes)
            #expect(try await search(client, "q=%25&in=username", as: alice).isEmpty)

            // Author filters, alone and with q; Bob sees his own private note.
            #expect(try await search(client, "author=me", as: alice) == alicesNotes)
            #expect(try await search(client, "author=others", as: alice) == bobsPublic)
            #expect(try await search(client, "author=bobby", as: alice) == bobsPublic, "usernames ignore case")
            #expect(try await search(client, "author=nobody", as: alice).isEmpty)
            #expect(try await search(client, "q=coffee&author=me", as: alice) == world.ids("Great COFFEE here"))
            #expect(try await search(client, "q=coffee&author=others", as: alice) == world.ids("coffee again"))
            #expect(try await search(client, "q=coffee&author=Bobby", as: bob).count == 2, "public and private")
            #expect(try await search(client, "q=coffee&author=me", as: bob).count == 2)
            #expect(try await search(client, "q=coffee", as: alice).count == 2, "never another's private note")
            let byUser = try await client.ids("/v1/users/BOBBY/notes?q=coffee", token: alice.accessToken)
            #expect(Set(byUser) == world.ids("coffee again"))
        }
    }

    @Test func searchCombinesWithNearest() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let world = try await world(client, tenant: tenant)
            let page = try await client.page("/v1/notes?q=coffee&near=1,0.02", token: world.alice.accessToken)
            let ids = page.items.map(\.id)
            #expect(ids == [world.ids["coffee again"]!, world.ids["Great COFFEE here"]!])
            let distances = page.items.compactMap(\.distanceM)
            #expect(distances.count == 2 && distances[0] < distances[1])
            let within = try await client.ids("/v1/notes?q=off&in=body&near=1,0&radius_m=5000", token: world.alice.accessToken)
            #expect(Set(within) == world.ids("coffee again", "50%_off"))
        }
    }

    @Test func searchTextLimits() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let alice = try await client.signup("alice", tenant: tenant)
            let longest = String(repeating: "é", count: 100)
            try await client.createNote(alice, "x" + longest + "x", lat: 0, lng: 0)
            #expect(try await client.ids("/v1/notes?q=\(queryValue(longest))", token: alice.accessToken).count == 1)
            for bad in ["q=", "q=\(queryValue(longest + "é"))", "q=abc&in=title", "in=body", "q=\(queryValue("a\u{7}b"))"] {
                let response = try await client.call(.get, "/v1/notes?" + bad, token: alice.accessToken)
                #expect(response.status == .badRequest, "\(bad)")
                #expect(response.code == "malformed_request")
            }
        }
    }
}
