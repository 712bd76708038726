import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

/// Others' private notes and other tenants' notes are "not found" everywhere.
@Suite(.timeLimit(.minutes(10))) struct NotesVisibilityTests {
    @Test func othersPrivateNotesNeverAppear() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let alice = try await client.signup("alice", tenant: tenant)
            let bob = try await client.signup("bob", tenant: tenant)
            let open = try await client.createNote(alice, "secret garden, open to all", lat: 10, lng: 10).id
            let hidden = try await client.createNote(alice, "secret garden, mine only", lat: 10, lng: 10.0001, visibility: "private").id
            let bobs = try await client.createNote(bob, "bob was here", lat: 10, lng: 10.0002).id

            // Bob sees Alice's public note and his own, never her private one.
            let lists = [
                "/v1/notes", "/v1/notes?near=10,10", "/v1/notes?near=10,10&radius_m=1000", "/v1/notes?bbox=9,9,11,11",
                "/v1/notes?q=secret", "/v1/notes?q=garden&in=body", "/v1/notes?q=alice&in=username", "/v1/notes?author=alice",
                "/v1/notes?author=others", "/v1/users/alice/notes", "/v1/users/alice/notes?q=mine",
            ]
            for path in lists {
                let ids = try await client.ids(path, token: bob.accessToken)
                #expect(!ids.contains(hidden), "\(path) shows another's private note")
                #expect(ids.contains(open) || path.contains("mine"), "\(path) misses a public note")
            }
            #expect(Set(try await client.ids("/v1/notes", token: bob.accessToken)) == [open, bobs])
            let clusters = try await client.call(.get, "/v1/notes/clusters?bbox=-180,-90,180,90&zoom=0", token: bob.accessToken)
            let counts = try clusters.decode(API.ClusterList.self).clusters.map(\.count)
            #expect(counts.reduce(0, +) == 2, "clusters count only what Bob may see")
            let profile = try await client.call(.get, "/v1/users/alice", token: bob.accessToken)
            #expect(try profile.decode(API.PublicProfile.self).noteCount == 1)

            // The private note is not found for Bob, whatever he does; and is unchanged after.
            for method in [HTTPRequest.Method.get, .patch, .delete] {
                let response = try await client.call(method, "/v1/notes/\(hidden)", json: method == .patch ? ["body": "mine now"] : nil, token: bob.accessToken)
                #expect(response.status == .notFound, "\(method) on another's private note")
                #expect(response.code == "not_found")
            }
            // The public one he may read but not change.
            for method in [HTTPRequest.Method.patch, .delete] {
                let response = try await client.call(method, "/v1/notes/\(open)", json: method == .patch ? ["body": "mine now"] : nil, token: bob.accessToken)
                #expect(response.status == .forbidden, "\(method) on another's public note")
                #expect(response.code == "forbidden")
            }
            let stillAlices = try await client.call(.get, "/v1/notes/\(hidden)", token: alice.accessToken)
            let alicesNote = try stillAlices.decode(API.Note.self)
            #expect(alicesNote.body == "secret garden, mine only")
            #expect(alicesNote.isMine == true)
            let stillOpen = try await client.call(.get, "/v1/notes/\(open)", token: bob.accessToken)
            let openNote = try stillOpen.decode(API.Note.self)
            #expect(openNote.body == "secret garden, open to all")
            #expect(openNote.isMine == false)
            #expect(try await NotesFixture.noteCount(tenant) == 3)

            // Alice sees her own private note in her lists.
            let mine = try await client.ids("/v1/notes?author=me", token: alice.accessToken)
            #expect(Set(mine) == [open, hidden])
        }
    }

    @Test func otherTenantsNotesAreNotFoundEverywhere() async throws {
        let home = try await TestEnvironment.makeTenant()
        let away = try await TestEnvironment.makeTenant()
        let awayPlace = try await NotesFixture.makePlace(away)
        try await withApp { client in
            let alice = try await client.signup("alice", tenant: home)
            let carol = try await client.signup("carol", tenant: away)
            let aliceNote = try await client.createNote(alice, "home note", lat: 5, lng: 5).id
            try await client.createNote(carol, "away note", lat: 5, lng: 5)

            for method in [HTTPRequest.Method.get, .patch, .delete] {
                let response = try await client.call(method, "/v1/notes/\(aliceNote)", json: method == .patch ? ["body": "x"] : nil, token: carol.accessToken)
                #expect(response.status == .notFound, "\(method) across tenants")
            }
            #expect(try await client.ids("/v1/notes?near=5,5", token: carol.accessToken).count == 1)
            #expect(try await client.ids("/v1/notes?q=note", token: carol.accessToken).count == 1)
            #expect(try await client.ids("/v1/notes?author=alice", token: carol.accessToken).isEmpty)
            #expect(try await client.call(.get, "/v1/users/alice/notes", token: carol.accessToken).status == .notFound)
            let clusters = try await client.call(.get, "/v1/notes/clusters?bbox=0,0,10,10&zoom=3", token: carol.accessToken)
            #expect(try clusters.decode(API.ClusterList.self).clusters.map(\.count) == [1])
            // Another tenant's place cannot be attached.
            let attached = try await client.call(
                .post, "/v1/notes", json: ["body": "x", "lat": 0, "lng": 0, "place_id": awayPlace], token: alice.accessToken)
            #expect(attached.status == .unprocessableContent)
            #expect(attached.errorFields.first == "place_id")
            #expect(try await NotesFixture.noteCount(home) == 1)
            #expect(try await client.call(.get, "/v1/notes/\(aliceNote)", token: alice.accessToken).status == .ok)
        }
    }
}
