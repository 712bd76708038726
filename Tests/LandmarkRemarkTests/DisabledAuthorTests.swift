import Foundation
import HummingbirdTesting
import Testing

/// A disabled user's notes leave every read (the `tenant_notes` view, migration 0010)
/// and come back when the user is enabled again.
@Suite(.timeLimit(.minutes(10))) struct DisabledAuthorTests {
    /// What `viewer` sees of `note`, one read path after another: `true` where it shows.
    func sightings(_ client: some TestClientProtocol, note: String, place: String, viewer: Account) async throws -> [String: Bool] {
        func listed(_ path: String) async throws -> Bool {
            try await client.ids(path, token: viewer.accessToken).contains(note)
        }
        let clusters = try await client.call(.get, "/v1/notes/clusters?bbox=150,-35,152,-33&zoom=3", token: viewer.accessToken)
        let counted = try clusters.decode(API.ClusterList.self).clusters.reduce(0) { $0 + $1.count }
        let placeCount = try await client.call(.get, "/v1/places/\(place)", token: viewer.accessToken).decode(API.Place.self).noteCount
        return [
            "newest": try await listed("/v1/notes"),
            "nearest": try await listed("/v1/notes?near=-33.86,151.21"),
            "viewport": try await listed("/v1/notes?bbox=151,-34,152,-33"),
            "search body": try await listed("/v1/notes?q=lighthouse&in=body"),
            "search username": try await listed("/v1/notes?q=keeper&in=username"),
            "author=": try await listed("/v1/notes?author=keeper_d"),
            "place_id=": try await listed("/v1/notes?place_id=\(place)"),
            "single": try await client.call(.get, "/v1/notes/\(note)", token: viewer.accessToken).status == .ok,
            "clusters": counted == 1,
            "place note_count": placeCount == 1,
        ]
    }

    @Test func aDisabledUsersNotesVanishEverywhereAndComeBack() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let author = try await client.signup("keeper_d", tenant: tenant)
            let viewer = try await client.signup("viewer_d", tenant: tenant)
            let place = try await client.createPlace(viewer, "Hornby", lat: -33.83, lng: 151.28).id
            let note = try await client.createNote(author, "the lighthouse at dusk", lat: -33.86, lng: 151.21, placeID: place).id
            let everywhere = try await sightings(client, note: note, place: place, viewer: viewer)
            #expect(everywhere.values.allSatisfy { $0 }, "\(everywhere)")

            try await TestEnvironment.withOwnerPool { try await $0.query("SELECT admin.set_user_disabled(\(tenant), 'keeper_d', true)") }
            let nowhere = try await sightings(client, note: note, place: place, viewer: viewer)
            #expect(nowhere.values.allSatisfy { !$0 }, "\(nowhere)")
            // Not changeable either: as if it did not exist.
            #expect(try await client.call(.patch, "/v1/notes/\(note)", json: ["body": "mine now"], token: viewer.accessToken).status == .notFound)
            #expect(try await client.call(.delete, "/v1/notes/\(note)", token: viewer.accessToken).status == .notFound)

            try await TestEnvironment.withOwnerPool { try await $0.query("SELECT admin.set_user_disabled(\(tenant), 'keeper_d', false)") }
            let back = try await sightings(client, note: note, place: place, viewer: viewer)
            #expect(back == everywhere, "\(back)")
        }
    }
}
