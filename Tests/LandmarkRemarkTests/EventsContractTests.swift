import Foundation
import Hummingbird
import HummingbirdTesting
import Postgres
import TestPolling
import Testing

@testable import LandmarkRemark

/// Issue 17's findings 7, 9 and 10 about event streams, through a live service.
extension EventsTests {
    /// Finding 7: a stream ends within a heartbeat of its token no longer admitting it.
    @Test func revokedDisabledAndExpiredStreamsEndWithinAHeartbeat() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        let doomed = try await TestEnvironment.makeTenant()
        try await withLiveApp({ $0.events.heartbeat = .seconds(1) }) { client, port in
            let everywhere = try await client.signup("everywhere", tenant: tenant)
            let disabled = try await client.signup("disabled", tenant: tenant)
            let inDoomed = try await client.signup("doomed", tenant: doomed)
            let expiring = try await client.signup("expiring", tenant: tenant)
            let streams = [
                try await everywhere.stream(port: port), try await disabled.stream(port: port),
                try await inDoomed.stream(port: port), try await expiring.stream(port: port),
            ]
            defer { streams.forEach { $0.close() } }
            #expect(try await client.call(.post, "/v1/auth/logout?all=true", token: everywhere.accessToken).status == .noContent)
            // The last one's access token expires now: moved in the database rather than given a
            // lifetime of seconds, which a loaded machine spent before its stream was open.
            try await TestEnvironment.withOwnerPool { pool in
                try await pool.query("SELECT admin.set_user_disabled(\(tenant), 'disabled', true)")
                try await pool.query("SELECT slug FROM admin.set_tenant_disabled(\(doomed), true)")
                try await pool.query("""
                    UPDATE session_tokens SET expires_at = now() - interval '1 second'
                    WHERE token_hash = sha256(convert_to(\(expiring.accessToken), 'UTF8'))
                    """)
            }
            // A note every stream of the tenant would otherwise receive.
            let writer = try await client.signup("writer", tenant: tenant)
            _ = try await client.createNote(writer, "after the end", lat: 0, lng: 0)
            // Waited for with a generous deadline (a stream left open would never close; on a
            // loaded machine a heartbeat's check can come seconds late).
            for stream in streams.prefix(3) {
                #expect(try await stream.waitForClose())
                #expect(try await stream.events(count: 1, timeout: .milliseconds(1)).allSatisfy { $0.data.contains("after the end") == false })
            }
            // The access token expired: the stream ends at a heartbeat after that.
            #expect(try await streams[3].waitForClose())
        }
    }

    /// A `Last-Event-ID` this replica's horizon has not reached yet, though the log holds it
    /// (read from a replica further on; here, the horizon polled every 3 s): the stream resumes
    /// from it once the horizon passes, without a reset and without replaying it.
    @Test func aPositionPastTheHorizonThatTheLogHoldsResumes() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withLiveApp({ $0.events.pollInterval = .seconds(3) }) { client, port in
            let account = try await client.signup("ahead", tenant: tenant)
            _ = try await client.createNote(account, "seen elsewhere", lat: 0, lng: 0)
            let seen = try await ClientTest.currentEventID(tenant: tenant)
            let stream = try await account.stream(port: port, lastEventID: seen)
            defer { stream.close() }
            _ = try await client.createNote(account, "next", lat: 0, lng: 0)
            let first = try #require(try await stream.events(count: 1).first)
            #expect(first.event == "note.created" && first.noteBody == "next")
        }
    }

    /// Finding 9: `Last-Event-ID` ahead of the log resets; event data is what GET returns;
    /// a note made public reaches the others as created.
    @Test func resetsAndEventDataMatchGet() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withLiveApp { client, port in
            let author = try await client.signup("publisher", tenant: tenant)
            let reader = try await client.signup("reader", tenant: tenant)
            let ahead = try await reader.stream(port: port, lastEventID: String(Int64.max / 2))
            defer { ahead.close() }
            let reset = try #require(try await ahead.events(count: 1).first)
            #expect(reset.event == "reset")
            #expect(try reset.decode(API.ResetEvent.self).reason == "unknown_position")
            #expect(reset.id.flatMap { Int64($0) }.map { $0 < Int64.max / 2 } == true)

            let theirs = try await reader.stream(port: port)
            let mine = try await author.stream(port: port)
            defer { theirs.close(); mine.close() }
            let note = try await client.createNote(author, "draft", lat: 2, lng: 2, visibility: "private").id
            #expect(try await client.call(.patch, "/v1/notes/\(note)", json: ["visibility": "public"], token: author.accessToken).status == .ok)
            let place = try await client.call(.post, "/v1/places", json: ["name": "Spot", "lat": 2, "lng": 2], token: author.accessToken)
            #expect(place.status == .created)
            let readerEvents = try await theirs.events(count: 2)
            #expect(readerEvents.map(\.event) == ["note.created", "place.created"])
            #expect(try await mine.events(count: 3).map(\.event) == ["note.created", "note.updated", "place.created"])
            // Each event's data is, key for key, what GET shows the same viewer.
            let noteGet = try await client.call(.get, "/v1/notes/\(note)", token: reader.accessToken)
            #expect(try readerEvents[0].decode(API.Note.self) == noteGet.decode(API.Note.self))
            #expect(try JSONTree(parsing: readerEvents[0].data).differences(from: noteGet.jsonValue) == [])
            let placeID = try place.decode(API.Place.self).id
            let placeGet = try await client.call(.get, "/v1/places/\(placeID)", token: reader.accessToken)
            // Strictly decoded: `note_count` is there, as in GET (EventDataMatchesRESTTests goes further).
            #expect(try readerEvents[1].decode(API.Place.self) == placeGet.decode(API.Place.self))
            #expect(try JSONTree(parsing: readerEvents[1].data).differences(from: placeGet.jsonValue) == [])
        }
    }

    /// Finding 9: a resume from before the retention horizon is a reset, not a silent gap.
    @Test func aResumeFromPurgedEventsIsAReset() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withLiveApp { client, port in
            let account = try await client.signup("late", tenant: tenant)
            let stream = try await account.stream(port: port)
            _ = try await client.createNote(account, "old news", lat: 0, lng: 0)
            let old = try #require(try await stream.events(count: 1).first?.id.flatMap { Int64($0) })
            stream.close()
            _ = try await client.createNote(account, "newer", lat: 0, lng: 0)
            // The first note's event turns 25 hours old and is purged; the second stays.
            let purged = try await TestEnvironment.withOwnerPool { pool -> Int64 in
                try await pool.query("UPDATE events SET created_at = now() - interval '25 hours' WHERE id = \(old)")
                return try await pool.query("SELECT purge_events()")[0].decode(Int64.self, column: 0)
            }
            #expect(purged >= 1)
            let resumed = try await account.stream(port: port, lastEventID: String(old - 1))
            defer { resumed.close() }
            let reset = try #require(try await resumed.events(count: 1).first)
            #expect(reset.event == "reset")
            #expect(try reset.decode(API.ResetEvent.self).reason == "expired")
            // From exactly the purge horizon on, nothing is missing: a plain resume.
            let exact = try await account.stream(port: port, lastEventID: String(old))
            defer { exact.close() }
            #expect(try await exact.events(count: 1).map(\.noteBody) == ["newer"])
        }
    }

    /// Finding 10: two writers of one tenant do not wait for each other, and a stream
    /// never passes an id whose transaction may still commit.
    @Test func writersDoNotWaitAndStreamsWaitForOpenTransactions() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        let tenantID = try await NotesFixture.tenantID(tenant)
        try await withLiveApp { client, port in
            let account = try await client.signup("concurrent", tenant: tenant)
            let user = try #require(Int64(account.userID))
            let stream = try await account.stream(port: port)
            defer { stream.close() }
            let insert: PostgresQuery = """
                INSERT INTO notes (tenant_id, user_id, body, location)
                VALUES (\(tenantID), \(user), 'held', ST_SetSRID(ST_MakePoint(3, 3), 4326)::geography)
                """
            for outcome in ["COMMIT", "ROLLBACK"] {
                try await TestEnvironment.withOwnerPool { pool in
                    try await pool.withConnection { held in
                        try await held.execute(unsafeSQL: "BEGIN")
                        try await held.query(insert)
                        // Another writer of the same tenant: no lock of the open transaction to wait
                        // for (one would hold it until the timeout fails it; a minute, since another
                        // suite's bulk seed may hold the table's writers back for seconds).
                        try await pool.withConnection { other in
                            try await other.execute(unsafeSQL: "SET lock_timeout = '60s'")
                            try await other.query("""
                                INSERT INTO notes (tenant_id, user_id, body, location)
                                VALUES (\(tenantID), \(user), \("after " + outcome), ST_SetSRID(ST_MakePoint(3, 3), 4326)::geography)
                                """)
                        }
                        // The later note is committed but not final: the horizon holds below the open one.
                        // No later write can bound this absence (every one of them waits behind the open
                        // transaction too), so the test waits for the horizon itself: three more polls of
                        // the log, each of which saw the committed note and had to hold it back.
                        let polls = try await Self.polls(client)
                        try #require(try await eventually(every: .milliseconds(20)) { try await Self.polls(client) >= polls + 3 })
                        #expect(!(try await stream.events(count: 100, timeout: .milliseconds(1)).contains { $0.data.contains("after " + outcome) }))
                        try await held.execute(unsafeSQL: outcome == "COMMIT" ? "COMMIT" : "ROLLBACK")
                    }
                }
            }
            let events = try await stream.events(count: 3)
            #expect(events.map(\.noteBody) == ["held", "after COMMIT", "after ROLLBACK"])
            let ids = events.compactMap { $0.id.flatMap { Int64($0) } }
            #expect(ids == ids.sorted())
        }
    }

    static func polls(_ client: any TestClientProtocol) async throws -> Int {
        let metrics = try await client.call(.get, "/metrics").body
        let line = metrics.split(separator: "\n").first { $0.hasPrefix("lr_event_log_polls ") }
        return Int(Double(line?.split(separator: " ").last ?? "0") ?? 0)
    }
}

@Suite struct EventHorizonTests {
    @Test func waitsForTransactionsRunningAtTheStart() {
        var horizon = EventHorizon(head: 10, snapshotXmax: 100)
        #expect(!horizon.isReady)
        _ = horizon.advance(.init(snapshotXmin: 99, snapshotXmax: 120, ids: [11], tenantIDs: [1]))
        #expect(!horizon.isReady && horizon.head == 10)
        let moved = horizon.advance(.init(snapshotXmin: 100, snapshotXmax: 120, ids: [11, 12], tenantIDs: [1, 2]))
        #expect(horizon.isReady && horizon.head == 12 && moved.tenants == [1, 2] && !moved.stoppedAtGap)
    }

    @Test func stopsAtAGapUntilEveryPossibleHolderHasEnded() {
        var horizon = EventHorizon(head: 0, snapshotXmax: 0)
        _ = horizon.advance(.init(snapshotXmin: 0, snapshotXmax: 0, ids: [], tenantIDs: []))
        // 2 is missing while 3 is visible; the snapshot's xmax is 50.
        var moved = horizon.advance(.init(snapshotXmin: 40, snapshotXmax: 50, ids: [1, 3], tenantIDs: [7, 8]))
        #expect(horizon.head == 1 && moved.tenants == [7] && moved.stoppedAtGap)
        // Transactions below 50 still run: still stopped, whatever else arrives.
        moved = horizon.advance(.init(snapshotXmin: 49, snapshotXmax: 60, ids: [3, 4], tenantIDs: [8, 8]))
        #expect(horizon.head == 1 && moved.stoppedAtGap)
        // 2 commits: delivered in order.
        moved = horizon.advance(.init(snapshotXmin: 49, snapshotXmax: 60, ids: [2, 3, 4], tenantIDs: [9, 8, 8]))
        #expect(horizon.head == 4 && moved.tenants == [8, 9] && !moved.stoppedAtGap)
        // 5 never commits: once xmin passes the xmax seen with the gap, it is skipped.
        moved = horizon.advance(.init(snapshotXmin: 60, snapshotXmax: 70, ids: [6], tenantIDs: [1]))
        #expect(horizon.head == 4 && moved.stoppedAtGap)
        moved = horizon.advance(.init(snapshotXmin: 70, snapshotXmax: 71, ids: [6], tenantIDs: [1]))
        #expect(horizon.head == 6 && !moved.stoppedAtGap && horizon.watches.isEmpty)
    }
}
