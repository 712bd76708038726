import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

/// One JSON shape per object: an event's `data` is, field for field, what
/// `GET /v1/notes/{id}` or `GET /v1/places/{id}` returns for the same object to the
/// same viewer at that moment (openapi.json: NoteEvent, PlaceEvent).
///
/// In `EventsTests` (serialized, run apart from the rest by scripts/test.sh) as the other
/// stream suites are.
extension EventsTests {
    /// Where an event's data and GET differ for the viewer; empty when they are the same.
    /// Each step waits for its event before the next write, and GETs before the next
    /// write too: both then read the same state of the object.
    static func differences(
        _ client: some TestClientProtocol, event kind: String, path: String, id: String, viewer: Account, stream: SSEClient,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> [String] {
        guard let event = try await stream.firstEvent(kind, id: id) else {
            Issue.record("\(viewer.username) never received \(kind) of \(id)", sourceLocation: sourceLocation)
            return ["no event"]
        }
        let shown = try await client.call(.get, path, token: viewer.accessToken)
        #expect(shown.status == .ok, "\(path): \(shown.body)", sourceLocation: sourceLocation)
        // Both decode strictly as the document's object (all fields, the right types) ...
        if path.hasPrefix("/v1/notes/") {
            _ = try event.decode(API.Note.self)
            _ = try shown.decode(API.Note.self)
        } else {
            _ = try event.decode(API.Place.self)
            _ = try shown.decode(API.Place.self)
        }
        // ... and, value for value, as the same JSON.
        return try JSONTree(parsing: event.data).differences(from: shown.jsonValue).map { "event vs GET \(path) as \(viewer.username): \($0)" }
    }

    @Test func eventDataIsWhatGetReturnsToTheSameViewer() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withLiveApp { client, port in
            let author = try await client.signup("shaper", tenant: tenant)
            let reader = try await client.signup("onlooker", tenant: tenant)
            let authorStream = try await author.stream(port: port)
            let readerStream = try await reader.stream(port: port)
            defer { authorStream.close(); readerStream.close() }
            let everyone = [(author, authorStream), (reader, readerStream)]

            // A custom place: its creator and another user see it, `note_count` 0.
            let place = try await client.createPlace(author, "Lookout", lat: -33.85, lng: 151.24)
            for (viewer, stream) in everyone {
                let differences = try await Self.differences(
                    client, event: "place.created", path: "/v1/places/\(place.id)", id: place.id, viewer: viewer, stream: stream)
                #expect(differences == [])
            }

            // A public note at the place: `is_mine` differs between the two, and each sees their own.
            let open = try await client.createNote(author, "the view at dawn", lat: -33.85, lng: 151.24, placeID: place.id)
            for (viewer, stream) in everyone {
                let differences = try await Self.differences(
                    client, event: "note.created", path: "/v1/notes/\(open.id)", id: open.id, viewer: viewer, stream: stream)
                #expect(differences == [])
            }

            // A private note, the author's own, at the same place: only the author's stream has it.
            let secret = try await client.createNote(
                author, "where I hid the key", lat: -33.85, lng: 151.24, visibility: "private", placeID: place.id)
            let secretDifferences = try await Self.differences(
                client, event: "note.created", path: "/v1/notes/\(secret.id)", id: secret.id, viewer: author, stream: authorStream)
            #expect(secretDifferences == [])

            // The place renamed: `note_count` is 2 for the author (a private note counts for its
            // author) and 1 for the reader; each event must say what GET says to its viewer.
            #expect(try await client.call(.patch, "/v1/places/\(place.id)", json: ["name": "Lookout Point"], token: author.accessToken).status == .ok)
            for (viewer, stream) in everyone {
                let differences = try await Self.differences(
                    client, event: "place.updated", path: "/v1/places/\(place.id)", id: place.id, viewer: viewer, stream: stream)
                #expect(differences == [])
            }
            // The stream is ordered: the reader has read the rename, written after the private
            // note, so the private note's absence from the reader's stream is proven, not waited for.
            #expect(!readerStream.received.contains { (try? JSONTree(parsing: $0.data))?["id"] == .string(secret.id) })
            // The premise: the two viewers see different counts.
            #expect(try await client.call(.get, "/v1/places/\(place.id)", token: author.accessToken).decode(API.Place.self).noteCount == 2)
            #expect(try await client.call(.get, "/v1/places/\(place.id)", token: reader.accessToken).decode(API.Place.self).noteCount == 1)

            // The public note edited and moved off the place.
            #expect(try await client.call(
                .patch, "/v1/notes/\(open.id)", json: ["body": "the view at dusk", "place_id": NSNull()], token: author.accessToken).status == .ok)
            for (viewer, stream) in everyone {
                let differences = try await Self.differences(
                    client, event: "note.updated", path: "/v1/notes/\(open.id)", id: open.id, viewer: viewer, stream: stream)
                #expect(differences == [])
            }

            // A default place (curated by an operator, `created_by` null) reaches everyone too.
            let curated = try await NotesFixture.makePlace(tenant, name: "Curated corner", lat: -33.86, lng: 151.20)
            for (viewer, stream) in everyone {
                let differences = try await Self.differences(
                    client, event: "place.created", path: "/v1/places/\(curated)", id: curated, viewer: viewer, stream: stream)
                #expect(differences == [])
            }
        }
    }
}
