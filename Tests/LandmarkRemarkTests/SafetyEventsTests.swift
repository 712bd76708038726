import Foundation
import HummingbirdTesting
import LandmarkRemark
import Testing

/// The safety kit on open streams (issue 34): a block, a held note and a removal, as
/// `/v1/events` delivers them. Apart from BlocksTests, ReportsTests and ModerationTests: a
/// stream waits for the one horizon of the whole log, which another suite's long transaction
/// (a 17,000-note seed) holds back, so the event suites run in their own pass
/// (scripts/test.sh, whose filter takes every suite named `…EventsTests`).
@Suite(.timeLimit(.minutes(10))) struct SafetyEventsTests {
    /// On a stream a block holds from the next batch: the blocked author's new note never
    /// arrives, live or replayed, and the viewer's own events still do.
    @Test func aBlockHoldsOnLiveStreamsAndReplays() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withLiveApp { client, port in
            let author = try await client.signup("author_s", tenant: tenant)
            let viewer = try await client.signup("viewer_s", tenant: tenant)
            let stream = try await viewer.stream(port: port)
            defer { stream.close() }
            _ = try await client.createNote(author, "before the block", lat: 0, lng: 0)
            let seen = try await stream.events(count: 1)
            #expect(seen.map(\.noteBody) == ["before the block"])
            let lastID = try #require(seen.last?.id)
            #expect(try await client.call(.put, "/v1/me/blocks/author_s", token: viewer.accessToken).status == .noContent)
            _ = try await client.createNote(author, "after the block", lat: 0, lng: 0)
            _ = try await client.createNote(viewer, "my own marker", lat: 0, lng: 0)
            // The marker was written after the blocked note: had that one been sent, it came first.
            #expect(try await stream.events(count: 2).map(\.noteBody) == ["before the block", "my own marker"])
            let replay = try await viewer.stream(port: port, lastEventID: lastID)
            defer { replay.close() }
            #expect(try await replay.events(count: 1).map(\.noteBody) == ["my own marker"])
        }
    }

    /// Two reporters at a threshold of two: the note is held, hidden from everyone but its
    /// author, who sees it marked; an open stream sees it go, the clusters stop counting it.
    @Test func reachingTheThresholdHoldsTheNoteForEveryoneButItsAuthor() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await ReportsTests.setThreshold(2, tenant: tenant)
        try await withLiveApp { client, port in
            let author = try await client.signup("author_t", tenant: tenant)
            let (first, second, bystander) = (
                try await client.signup("first_t", tenant: tenant), try await client.signup("second_t", tenant: tenant),
                try await client.signup("bystander_t", tenant: tenant))
            // The stream first: one opened after the write starts where its replica's log reader
            // is, which may be past the note's event already.
            let stream = try await bystander.stream(port: port)
            defer { stream.close() }
            let note = try await client.createNote(author, "spam spam spam", lat: -33.86, lng: 151.21).id
            #expect(try await stream.events(count: 1).map(\.event) == ["note.created"])
            func clustered() async throws -> Int {
                try await client.call(.get, "/v1/notes/clusters?bbox=150,-35,152,-33&zoom=3", token: bystander.accessToken)
                    .decode(API.ClusterList.self).clusters.reduce(0) { $0 + $1.count }
            }
            #expect(try await clustered() == 1)
            #expect(try await client.report(first, "note", note).status == .created)
            #expect(try await client.sees(note: note, as: bystander))
            #expect(try await client.report(second, "note", note, reason: "spam").status == .created)
            #expect(try await !client.sees(note: note, as: bystander))
            #expect(try await clustered() == 0)
            let events = try await stream.events(count: 2)
            #expect(events.last?.event == "note.deleted")
            #expect(try await client.sees(note: note, as: author))
            let held = try await client.call(.get, "/v1/notes/\(note)", token: author.accessToken).decode(API.Note.self)
            #expect(held.moderation == "pending")
        }
    }

    @Test func removingDeletesForEveryoneAndStreamsSeeIt() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withLiveApp { client, port in
            let moderator = try await client.signup("mod_r", tenant: tenant)
            try await ModerationTests.makeModerator(moderator)
            let author = try await client.signup("author_r2", tenant: tenant)
            let reporter = try await client.signup("reporter_r2", tenant: tenant)
            let stream = try await author.stream(port: port)
            defer { stream.close() }
            let note = try await client.createNote(author, "remove me", lat: 0, lng: 0).id
            #expect(try await stream.events(count: 1).map(\.event) == ["note.created"])
            #expect(try await client.report(reporter, "note", note).status == .created)
            #expect(try await ModerationTests.decide(client, moderator, "note", note, ["action": "remove"]).status == .ok)
            let gone = try #require(try await stream.events(count: 2).last)
            #expect(gone.event == "note.deleted")
            #expect(try await client.call(.get, "/v1/notes/\(note)", token: author.accessToken).status == .notFound)
            let theirs = try await client.call(.get, "/v1/me/reports", token: reporter.accessToken).decode(API.ReportPage.self)
            #expect(theirs.items.map(\.state) == ["actioned"])
            // Again: there is nothing left to decide on.
            #expect(try await ModerationTests.decide(client, moderator, "note", note, ["action": "remove"]).code == "not_found")
        }
    }

    /// A place held at the threshold leaves everyone else's stream as a deletion (its creator
    /// keeps it), and comes back to them as new when a moderator dismisses the reports.
    @Test func aHeldPlaceLeavesOtherStreamsAndComesBackWhenReleased() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await ReportsTests.setThreshold(2, tenant: tenant)
        try await withLiveApp { client, port in
            let moderator = try await client.signup("mod_hp", tenant: tenant)
            try await ModerationTests.makeModerator(moderator)
            let maker = try await client.signup("maker_hp", tenant: tenant)
            let (first, second, bystander) = (
                try await client.signup("first_hp", tenant: tenant), try await client.signup("second_hp", tenant: tenant),
                try await client.signup("bystander_hp", tenant: tenant))
            let watching = try await bystander.stream(port: port)
            defer { watching.close() }
            let making = try await maker.stream(port: port)
            defer { making.close() }
            let place = try await client.createPlace(maker, "Disputed lookout", lat: -33.86, lng: 151.21).id
            #expect(try await watching.events(count: 1).map(\.event) == ["place.created"])
            #expect(try await making.events(count: 1).map(\.event) == ["place.created"])
            #expect(try await client.report(first, "place", place).status == .created)
            #expect(try await client.report(second, "place", place).status == .created)
            let gone = try #require(try await watching.events(count: 2).last)
            #expect(gone.event == "place.deleted" && gone.data.contains(place))
            // Its creator sees it held, not gone.
            let held = try #require(try await making.events(count: 2).last)
            #expect(held.event == "place.updated" && held.data.contains("\"pending\""))
            #expect(try await ModerationTests.decide(client, moderator, "place", place, ["action": "dismiss"]).status == .ok)
            let back = try #require(try await watching.events(count: 3).last)
            #expect(back.event == "place.created" && back.data.contains(place))
            #expect(try await making.events(count: 3).last?.event == "place.updated")
        }
    }
}
