import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LandmarkRemark
import Postgres
import TestPolling
import Testing

/// Runs the real application on a real socket, for streams.
func withLiveApp(
    _ adjust: (inout AppConfiguration) -> Void = { _ in },
    _ body: @Sendable (any TestClientProtocol, Int) async throws -> Void
) async throws {
    try await TestEnvironment.migrate()
    let app = try await buildApplication(configuration: try TestEnvironment.configuration(adjust), logger: TestEnvironment.logger)
    try await runLive(app, body)
}

extension Account {
    func stream(port: Int, query: String = "", lastEventID: String? = nil) async throws -> SSEClient {
        var headers = ["Authorization": "Bearer \(accessToken)"]
        if let lastEventID { headers["Last-Event-ID"] = lastEventID }
        let client = try await SSEClient.connect(port: port, path: "/v1/events" + query, headers: headers)
        #expect(client.status == 200)
        return client
    }
}

extension SSEClient.Event {
    /// The body of a note event's data; nil (and an issue recorded) when the data is not a note.
    var noteBody: String? {
        do { return try note().body } catch {
            Issue.record("\(event ?? "message") \(id ?? ""): \(error)")
            return nil
        }
    }
}

/// Inserts notes as the owner from `writers` concurrent connections; the triggers log them as the API's writes are.
func insertNotes(tenant: String, userID: String, count: Int, writers: Int, body: String = "burst") async throws {
    let tenantID = try await NotesFixture.tenantID(tenant)
    let user = try #require(Int64(userID))
    try await withThrowingTaskGroup(of: Void.self) { group in
        for writer in 0..<writers {
            group.addTask {
                try await TestEnvironment.withOwnerPool { pool in
                    for index in stride(from: writer, to: count, by: writers) {
                        try await pool.query("""
                            INSERT INTO notes (tenant_id, user_id, body, location)
                            VALUES (\(tenantID), \(user), \("\(body) \(index)"), ST_SetSRID(ST_MakePoint(151.2, -33.8), 4326)::geography)
                            """)
                    }
                }
            }
        }
        try await group.waitForAll()
    }
}

/// An event id of the tenant's log from before what the test writes next, to resume from:
/// on one server the sequence's last id; where Citus holds the log (per tenant, migration
/// 0018) the tenant's newest id on its worker, whose range its ids come from.
func eventPosition(tenantID: Int64) async throws -> Int64 {
    try await TestEnvironment.withOwnerPool { pool in
        if try await pool.query("SELECT event_log_mode()")[0].decode(String.self, column: 0) == "global" {
            return try await pool.query("SELECT last_value FROM event_ids")[0].decode(Int64.self, column: 0)
        }
        return try await pool.query("SELECT event_probe(\(tenantID), 0)")[0].decode([Int64].self, column: 0)[3]
    }
}

@Suite(.serialized, .timeLimit(.minutes(10))) struct EventsTests {
    @Test func aSubscriberSeesItsTenantsChangesInOrderAndNothingElse() async throws {
        let a = try await TestEnvironment.makeTenant()
        let b = try await TestEnvironment.makeTenant()
        try await withLiveApp { client, port in
            let watcher = try await client.signup("watcher", tenant: a)
            let writer = try await client.signup("writer", tenant: a)
            let stranger = try await client.signup("stranger", tenant: b)
            let stream = try await watcher.stream(port: port)
            defer { stream.close() }

            _ = try await client.createNote(stranger, "other tenant", lat: 1, lng: 1)
            _ = try await client.createNote(writer, "secret", lat: 1, lng: 1, visibility: "private")
            // Each step waits for its event: a stream reads objects as they are when it reads,
            // so a note already deleted by then is not shown as created (it was withdrawn).
            let note = try await client.createNote(writer, "hello", lat: -33.86, lng: 151.21)
            let id = note.id
            _ = try await stream.events(count: 1)
            #expect(try await client.call(.patch, "/v1/notes/\(id)", json: ["body": "hello again"], token: writer.accessToken).status == .ok)
            _ = try await stream.events(count: 2)
            #expect(try await client.call(.delete, "/v1/notes/\(id)", token: writer.accessToken).status == .noContent)
            _ = try await stream.events(count: 3)
            // A marker written last: once it arrives, everything before it has been read.
            _ = try await client.createNote(writer, "marker", lat: 0, lng: 0)
            let events = try await stream.events(count: 4)
            #expect(events.map(\.event) == ["note.created", "note.updated", "note.deleted", "note.created"])
            #expect(try events[3].note().body == "marker")
            let created = try events[0].note()
            #expect(created.id == id)
            #expect(created.body == "hello")
            #expect(created.isMine == false)
            #expect(created.author.username == "writer")
            #expect(try events[1].note().body == "hello again")
            // A deletion carries the id alone (the strict decode refuses any other field).
            #expect(try events[2].decode(API.DeletedEvent.self) == API.DeletedEvent(id: id))
            let ids = events.compactMap { $0.id.flatMap { Int($0) } }
            #expect(ids == ids.sorted() && Set(ids).count == 4)
        }
    }

    @Test func theAuthorSeesTheirOwnPrivateNotesAndBboxFilters() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withLiveApp { client, port in
            let author = try await client.signup("author", tenant: tenant)
            let everything = try await author.stream(port: port)
            let sydney = try await author.stream(port: port, query: "?bbox=150,-35,152,-33")
            let pacific = try await author.stream(port: port, query: "?bbox=170,-20,-170,20")
            defer { [everything, sydney, pacific].forEach { $0.close() } }
            _ = try await client.createNote(author, "mine only", lat: -33.8, lng: 151.2, visibility: "private")
            _ = try await client.createNote(author, "fiji", lat: -17.7, lng: 178.0)
            _ = try await client.createNote(author, "samoa", lat: -13.8, lng: -171.8)
            _ = try await client.createNote(author, "london", lat: 51.5, lng: -0.1)
            // Markers inside both boxes, written last: once they arrive, the boxes' streams have read everything.
            _ = try await client.createNote(author, "marker sydney", lat: -34, lng: 151)
            _ = try await client.createNote(author, "marker pacific", lat: 0, lng: 179.5)
            let all = try await everything.events(count: 6)
            #expect(all.map(\.noteBody) == ["mine only", "fiji", "samoa", "london", "marker sydney", "marker pacific"])
            #expect(try all[0].note().isMine == true)
            #expect(try all[0].note().visibility == "private")
            #expect(try await sydney.events(count: 2).map(\.noteBody) == ["mine only", "marker sydney"])
            #expect(try await pacific.events(count: 3).map(\.noteBody) == ["fiji", "samoa", "marker pacific"])
        }
    }

    @Test func resumingWithLastEventIDReplaysExactlyWhatWasMissed() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withLiveApp { client, port in
            let account = try await client.signup("resumer", tenant: tenant)
            let first = try await account.stream(port: port)
            _ = try await client.createNote(account, "before", lat: 0, lng: 0)
            let seen = try await first.events(count: 1)
            let lastID = try #require(seen.last?.id)
            first.close()
            try await insertNotes(tenant: tenant, userID: account.userID, count: 50, writers: 1, body: "missed")
            let resumed = try await account.stream(port: port, lastEventID: lastID)
            defer { resumed.close() }
            _ = try await client.createNote(account, "after", lat: 0, lng: 0)
            let replayed = try await resumed.events(count: 51)
            #expect(replayed.map(\.noteBody) == (0..<50).map { "missed \($0)" } + ["after"])
            // The query parameter works for clients that cannot set headers.
            let viaQuery = try await account.stream(port: port, query: "?last_event_id=\(lastID)")
            defer { viaQuery.close() }
            #expect(try await viaQuery.events(count: 51).count == 51)
        }
    }

    @Test func aBurstReachesTwentyStreamsCompleteAndInOrder() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withLiveApp({ $0.database.poolSize = 8; $0.events.streamsPerUser = 20 }) { client, port in
            let account = try await client.signup("burst", tenant: tenant)
            var streams: [SSEClient] = []
            for _ in 0..<20 { streams.append(try await account.stream(port: port)) }
            defer { streams.forEach { $0.close() } }
            try await insertNotes(tenant: tenant, userID: account.userID, count: 1000, writers: 4)
            for stream in streams {
                let events = try await stream.events(count: 1000)
                let ids = events.compactMap { $0.id.flatMap { Int($0) } }
                #expect(ids.count == 1000)
                #expect(ids == ids.sorted())
                #expect(Set(ids).count == 1000)
                #expect(Set(events.compactMap(\.noteBody)).count == 1000)
            }
        }
    }

    @Test func expiredTokensAreRefusedAndRevokedSessionsClosed() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withLiveApp({ $0.events.heartbeat = .seconds(1) }) { client, port in
            let account = try await client.signup("revoked", tenant: tenant)
            let refused = try await SSEClient.connect(port: port, path: "/v1/events", headers: ["Authorization": "Bearer lr_at_" + String(repeating: "x", count: 43)])
            #expect(refused.status == 401)
            refused.close()
            let stream = try await account.stream(port: port)
            #expect(try await client.call(.post, "/v1/auth/logout", token: account.accessToken).status == .noContent)
            #expect(try await stream.waitForClose())
        }
    }

    @Test func heartbeatsAndStreamLimits() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withLiveApp({ $0.events.heartbeat = .seconds(1); $0.events.streamsPerUser = 2 }) { client, port in
            let account = try await client.signup("limited", tenant: tenant)
            let one = try await account.stream(port: port)
            let two = try await account.stream(port: port)
            defer { one.close(); two.close() }
            let three = try await SSEClient.connect(port: port, path: "/v1/events", headers: ["Authorization": "Bearer \(account.accessToken)"])
            #expect(three.status == 429)
            three.close()
            let badResume = try await SSEClient.connect(port: port, path: "/v1/events?last_event_id=abc", headers: ["Authorization": "Bearer \(account.accessToken)"])
            #expect(badResume.status == 400)
            badResume.close()
            let typo = try await SSEClient.connect(port: port, path: "/v1/events?box=1,2,3,4", headers: ["Authorization": "Bearer \(account.accessToken)"])
            #expect(typo.status == 400)
            typo.close()
            #expect(try await one.wait { $0.comments >= 2 })
        }
    }

    /// A client that stops reading is disconnected once one write has waited past the
    /// write timeout, without the client doing anything, and resumes with `Last-Event-ID`.
    @Test func aClientThatStopsReadingIsDisconnectedAndResumesWithoutLoss() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withLiveApp({
            $0.events.writeTimeout = .seconds(1); $0.events.streamsPerUser = 1
            $0.events.replayMax = 100_000; $0.events.replayRate = 1_000_000
        }) { client, port in
            let account = try await client.signup("stalled", tenant: tenant)
            let stalled = try await SSEClient.connect(
                port: port, path: "/v1/events", headers: ["Authorization": "Bearer \(account.accessToken)"], receiveBuffer: 4096)
            #expect(stalled.status == 200)
            stalled.pause()
            // About 14 MB of events in one statement: far more than the socket buffers
            // (a few MB at most on loopback) and the channel's high-water mark hold.
            let total = 20_000
            let tenantID = try await NotesFixture.tenantID(tenant)
            try await TestEnvironment.withOwnerPool { pool in
                try await pool.query("""
                    INSERT INTO notes (tenant_id, user_id, body, location)
                    SELECT \(tenantID), \(try #require(Int64(account.userID))), g || ' ' || repeat('x', 480),
                           ST_SetSRID(ST_MakePoint(151.2, -33.8), 4326)::geography
                    FROM generate_series(1, \(total)) g
                    """)
            }
            // The server gives up on the stream while the client still reads nothing: polled on
            // a real condition (the open-streams gauge).
            #expect(
                try await eventually(every: .milliseconds(200)) {
                    try await client.call(.get, "/metrics").body.contains("lr_event_streams_open 0")
                })
            // Reading again drains what the kernel held, then the end of the connection.
            stalled.resume()
            #expect(try await stalled.waitForClose())
            let received = try await stalled.events(count: total, timeout: .seconds(1))
            #expect(received.count > 0 && received.count < total)
            let lastID = try #require(received.last?.id)
            // The slot is free again (limit 1), and the rest arrives exactly once, in order.
            let resumed = try await account.stream(port: port, lastEventID: lastID)
            defer { resumed.close() }
            let rest = try await resumed.events(count: total - received.count)
            let ids = (received + rest).compactMap { $0.id.flatMap { Int64($0) } }
            #expect(ids.count == total)
            #expect(Set(ids).count == total)
            #expect(zip(ids, ids.dropFirst()).allSatisfy { $0 < $1 })
        }
    }
}
