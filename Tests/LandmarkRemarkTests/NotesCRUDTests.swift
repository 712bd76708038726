import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@Suite(.timeLimit(.minutes(10))) struct NotesCRUDTests {
    @Test func createShowsTheNoteExactlyAsTheContractSays() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let alice = try await client.signup("alice", tenant: tenant)
            let response = try await client.call(
                .post, "/v1/notes", json: ["body": "  Great coffee, ask for the window seat \n", "lat": -33.8688, "lng": 151.2093],
                token: alice.accessToken)
            #expect(response.status == .created)
            let note = try response.decode(API.Note.self)
            let id = note.id
            #expect(response.headers[.location] == "/v1/notes/\(id)")
            #expect(response.headers[.eTag]?.hasPrefix("\"") == true)
            // Exactly the contract's required keys: `distance_m` only with `near`, `place_id` present and null.
            #expect(response.jsonValue.keys == (try OpenAPITests.requiredKeys(of: "Note")))
            #expect(response.jsonValue["place_id"] == .null)
            #expect(note.body == "Great coffee, ask for the window seat")
            #expect(note.lat == -33.8688)
            #expect(note.lng == 151.2093)
            #expect(note.author == API.UserSummary(id: alice.userID, username: "alice"))
            #expect(note.isMine == true)
            #expect(note.visibility == "public")
            #expect(note.placeID == nil)
            #expect(note.distanceM == nil)
            // Both timestamps decoded as `Timestamp`: RFC 3339 in UTC with milliseconds.
            #expect(note.updatedAt >= note.createdAt)

            let shown = try await client.call(.get, "/v1/notes/\(id)", token: alice.accessToken)
            #expect(shown.status == .ok)
            #expect(shown.body == response.body)
            #expect(shown.headers[.eTag] == response.headers[.eTag])
        }
    }

    @Test func conditionalRequestsUseTheETag() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let alice = try await client.signup("alice", tenant: tenant)
            let created = try await client.call(.post, "/v1/notes", json: ["body": "first", "lat": 1, "lng": 2], token: alice.accessToken)
            let id = try created.decode(API.Note.self).id
            let tag = try #require(created.headers[.eTag])

            let notModified = try await client.call(.get, "/v1/notes/\(id)", token: alice.accessToken, headers: [.ifNoneMatch: tag])
            #expect(notModified.status == .notModified)
            #expect(notModified.headers[.eTag] == tag)
            #expect(notModified.body.isEmpty)
            let weak = try await client.call(.get, "/v1/notes/\(id)", token: alice.accessToken, headers: [.ifNoneMatch: "\"other\", W/\(tag)"])
            #expect(weak.status == .notModified)
            let changed = try await client.call(.get, "/v1/notes/\(id)", token: alice.accessToken, headers: [.ifNoneMatch: "\"other\""])
            #expect(changed.status == .ok)

            let updated = try await client.call(
                .patch, "/v1/notes/\(id)", json: ["body": "second"], token: alice.accessToken, headers: [.ifMatch: tag])
            #expect(updated.status == .ok)
            let newTag = try #require(updated.headers[.eTag])
            #expect(newTag != tag)
            #expect(try updated.decode(API.Note.self).body == "second")

            // The old tag is stale now: 412, and nothing changes.
            let stale = try await client.call(
                .patch, "/v1/notes/\(id)", json: ["body": "third"], token: alice.accessToken, headers: [.ifMatch: tag])
            #expect(stale.status == .preconditionFailed)
            #expect(stale.code == "precondition_failed")
            let weakMatch = try await client.call(
                .patch, "/v1/notes/\(id)", json: ["body": "third"], token: alice.accessToken, headers: [.ifMatch: "W/\(newTag)"])
            #expect(weakMatch.status == .preconditionFailed, "If-Match compares strongly")
            let staleDelete = try await client.call(.delete, "/v1/notes/\(id)", token: alice.accessToken, headers: [.ifMatch: tag])
            #expect(staleDelete.status == .preconditionFailed)
            let current = try await client.call(.get, "/v1/notes/\(id)", token: alice.accessToken)
            #expect(try current.decode(API.Note.self).body == "second")
            #expect(current.headers[.eTag] == newTag)
        }
    }

    @Test func patchChangesOnlyWhatItNamesAndDeleteRemoves() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        let place = try await NotesFixture.makePlace(tenant, name: "Opera House", lat: -33.8568, lng: 151.2153)
        try await withApp { client in
            let alice = try await client.signup("alice", tenant: tenant)
            let note = try await client.createNote(alice, "by the water", lat: -33.8568, lng: 151.2153, placeID: place)
            let id = note.id
            #expect(note.placeID == place)

            // Not a wait for an event: timestamps have millisecond resolution, and the update
            // below must fall in a later millisecond than the creation for `updated_at` to move.
            try await Task.sleep(for: .milliseconds(5))
            let hidden = try await client.call(.patch, "/v1/notes/\(id)", json: ["visibility": "private"], token: alice.accessToken)
            #expect(hidden.status == .ok)
            let hiddenNote = try hidden.decode(API.Note.self)
            #expect(hiddenNote.visibility == "private")
            #expect(hiddenNote.body == "by the water")
            #expect(hiddenNote.placeID == place)
            #expect(hiddenNote.createdAt == note.createdAt)
            #expect(hiddenNote.updatedAt > note.updatedAt)

            let detached = try await client.call(.patch, "/v1/notes/\(id)", json: ["place_id": NSNull()], token: alice.accessToken)
            #expect(try detached.decode(API.Note.self).placeID == nil)
            let attached = try await client.call(.patch, "/v1/notes/\(id)", json: ["place_id": place, "body": " new words "], token: alice.accessToken)
            let attachedNote = try attached.decode(API.Note.self)
            #expect(attachedNote.placeID == place)
            #expect(attachedNote.body == "new words")
            let nothing = try await client.call(.patch, "/v1/notes/\(id)", json: [:], token: alice.accessToken)
            #expect(nothing.status == .ok)
            #expect(nothing.body == attached.body)

            let deleted = try await client.call(.delete, "/v1/notes/\(id)", token: alice.accessToken)
            #expect(deleted.status == .noContent)
            #expect(try await client.call(.get, "/v1/notes/\(id)", token: alice.accessToken).status == .notFound)
            #expect(try await client.call(.delete, "/v1/notes/\(id)", token: alice.accessToken).status == .notFound)
            #expect(try await NotesFixture.noteCount(tenant) == 0)
        }
    }

    @Test func aDeletedPlaceLeavesItsNotesWithoutOneAndChangesTheirETag() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        let place = try await NotesFixture.makePlace(tenant)
        try await withApp { client in
            let alice = try await client.signup("alice", tenant: tenant)
            let created = try await client.call(
                .post, "/v1/notes", json: ["body": "here", "lat": 0, "lng": 0, "place_id": place], token: alice.accessToken)
            let id = try created.decode(API.Note.self).id
            try await TestEnvironment.withOwnerPool { try await $0.query("DELETE FROM places WHERE id = \(Int64(place)!)") }
            let shown = try await client.call(.get, "/v1/notes/\(id)", token: alice.accessToken)
            #expect(try shown.decode(API.Note.self).placeID == nil)
            #expect(shown.headers[.eTag] != created.headers[.eTag])
        }
    }

    @Test func clustersIsNotTakenForANoteID() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let alice = try await client.signup("alice", tenant: tenant)
            let missing = try await client.call(.get, "/v1/notes/clusters", token: alice.accessToken)
            #expect(missing.status == .badRequest, "bbox is required: \(missing.body)")
            let ok = try await client.call(.get, "/v1/notes/clusters?bbox=-180,-90,180,90&zoom=0", token: alice.accessToken)
            #expect(ok.status == .ok)
            #expect(try ok.decode(API.ClusterList.self).clusters.isEmpty)
        }
    }

    @Test func everyNoteEndpointNeedsAToken() async throws {
        try await withApp { client in
            let calls: [(HTTPRequest.Method, String)] = [
                (.post, "/v1/notes"), (.get, "/v1/notes"), (.get, "/v1/notes/1"), (.patch, "/v1/notes/1"),
                (.delete, "/v1/notes/1"), (.get, "/v1/notes/clusters?bbox=0,0,1,1&zoom=3"), (.get, "/v1/users/alice/notes"),
            ]
            for (method, path) in calls {
                let response = try await client.call(method, path, json: method == .post || method == .patch ? ["body": "x"] : nil)
                #expect(response.status == .unauthorized, "\(method) \(path)")
                #expect(response.code == "unauthenticated")
            }
        }
    }

    @Test func noteCountsFollowNotes() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let alice = try await client.signup("alice", tenant: tenant)
            let bob = try await client.signup("bob", tenant: tenant)
            try await client.createNote(alice, "one", lat: 0, lng: 0)
            try await client.createNote(alice, "two", lat: 0, lng: 0, visibility: "private")
            let me = try await client.call(.get, "/v1/me", token: alice.accessToken)
            #expect(try me.decode(API.Me.self).noteCount == 2)
            let profile = try await client.call(.get, "/v1/users/alice", token: bob.accessToken)
            #expect(try profile.decode(API.PublicProfile.self).noteCount == 1, "others count public notes only")
        }
    }
}
