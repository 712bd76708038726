import Foundation
import Hummingbird
import HummingbirdTesting
import Postgres
import TestPolling
import Testing

@testable import LandmarkRemark

/// Issue 17's findings about the event stream, each through the real service.
/// Part of `EventsTests` (serialized): the retention test moves the log's purge horizon.
extension EventsTests {
    /// Finding 1: a read looks at a bounded window of ids and moves past what it filtered out.
    @Test func aReadLooksAtABoundedWindowAndMovesPastWhatItFilters() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        let tenantID = try await NotesFixture.tenantID(tenant)
        let userID = try await TestEnvironment.ownerScalar(
            "INSERT INTO users (tenant_id, username, password_hash) VALUES (\(tenantID), 'windows', '!') RETURNING id", as: Int64.self)
        try await TestEnvironment.withOwnerPool { pool in
            try await pool.query("""
                INSERT INTO notes (tenant_id, user_id, body, location)
                SELECT \(tenantID), \(userID), 'far away ' || g, ST_SetSRID(ST_MakePoint(0, 0), 4326)::geography
                FROM generate_series(1, 15000) g
                """)
        }
        let first = try await TestEnvironment.ownerScalar("SELECT min(id) - 1 FROM events WHERE tenant_id = \(tenantID)", as: Int64.self)
        let head = try await TestEnvironment.ownerScalar("SELECT max(id) FROM events WHERE tenant_id = \(tenantID)", as: Int64.self)
        let emptyOcean = try #require(BoundingBox(parameter: "-150,-50,-149,-49"))
        let pool = try PostgresPool(configuration: .init(conninfo: try TestEnvironment.variable("LR_TEST_DATABASE_URL"), maxConnections: 1))
        defer { Task { await pool.close() } }
        /// One read as the stream makes it, and how many event rows it touched.
        func read(after: Int64, upTo: Int64) async throws -> (EventLog.Batch, Int64) {
            // The backend's counts not yet reported (they build up over transactions): the difference.
            let touched: PostgresQuery = """
                SELECT coalesce(idx_tup_fetch, 0) + coalesce(seq_tup_read, 0) FROM pg_stat_xact_user_tables WHERE relname = 'events'
                """
            return try await pool.withTenantTransaction(tenantID, logger: TestEnvironment.logger) { connection in
                let before = try await connection.query(touched)[0].decode(Int64.self, column: 0)
                let batch = try await EventLog(notes: NoteStore(), places: PlaceStore(), tokens: AccessTokenStore()).read(
                    tenantID: tenantID, viewerID: userID, after: after, upTo: upTo, box: emptyOcean, on: connection)
                let after = try await connection.query(touched)[0].decode(Int64.self, column: 0)
                return (batch, after - before)
            }
        }
        let (one, touchedOne) = try await read(after: first, upTo: head)
        #expect(one.entries.isEmpty)
        #expect(one.position == first + EventLog.window)
        #expect(touchedOne <= EventLog.window)
        let (two, touchedTwo) = try await read(after: one.position, upTo: head)
        #expect(two.entries.isEmpty && two.position == head)
        #expect(touchedTwo <= EventLog.window)
        // Once at the head, a wake for three new events looks at those three.
        try await insertNotes(tenant: tenant, userID: String(userID), count: 3, writers: 1, body: "elsewhere")
        let newHead = try await TestEnvironment.ownerScalar("SELECT max(id) FROM events WHERE tenant_id = \(tenantID)", as: Int64.self)
        let (three, touchedThree) = try await read(after: head, upTo: newHead)
        #expect(three.position == newHead)
        #expect(touchedThree <= 3)
        // Through the tenant's own index, whatever other tenants wrote in between, also now
        // that the statistics say this tenant holds most of the log.
        try await TestEnvironment.withOwnerPool { try await $0.query("ANALYZE events") }
        let plan = try await pool.withTenantTransaction(tenantID, logger: TestEnvironment.logger) { connection in
            var explain = "EXPLAIN (FORMAT JSON) " + EventLog.windowStatement(
                tenantID: tenantID, viewerID: userID, after: head, end: newHead, box: emptyOcean)
            explain.prepared = false
            return try await connection.query(explain)[0].decode(String.self, column: 0)
        }
        #expect(plan.contains("events_pkey") && !plan.contains("events_log_order"), "\(plan)")
        // And the generic plan a prepared statement settles on after five runs.
        let statement = EventLog.windowStatement(tenantID: tenantID, viewerID: userID, after: head, end: newHead, box: nil)
        let generic = try await pool.withTenantTransaction(tenantID, logger: TestEnvironment.logger) { connection in
            try await connection.execute(unsafeSQL: "SET LOCAL plan_cache_mode = force_generic_plan")
            try await connection.query("PREPARE window_read AS \(textOf: statement)")
            let rows = try await connection.query("""
                EXPLAIN (FORMAT JSON) EXECUTE window_read(\(literal: Int(tenantID)), \(literal: Int(head)), \(literal: Int(newHead)),
                    \(literal: Int(userID)), \(literal: Int(userID)), \(literal: EventLog.batchSize))
                """)
            try await connection.execute(unsafeSQL: "DEALLOCATE window_read")
            return try rows[0].decode(String.self, column: 0)
        }
        #expect(generic.contains("events_pkey") && !generic.contains("events_log_order"), "\(generic)")
    }

    /// Finding 1, live: a stream whose viewport matches nothing still moves its position
    /// to the head, and tells the client so in the heartbeat's `id`.
    @Test func aStreamOverAnEmptyViewportKeepsItsPositionAtTheHead() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withLiveApp({ $0.events.heartbeat = .seconds(1) }) { client, port in
            let account = try await client.signup("ocean", tenant: tenant)
            let stream = try await account.stream(port: port, query: "?bbox=-150,-50,-149,-49")
            defer { stream.close() }
            try await insertNotes(tenant: tenant, userID: account.userID, count: 50, writers: 2)
            let head = try await TestEnvironment.ownerScalar(
                "SELECT max(e.id) FROM events e JOIN tenants t ON t.id = e.tenant_id WHERE t.slug = \(tenant)", as: Int64.self)
            #expect(try await stream.wait { ($0.lastEventID.flatMap { Int64($0) } ?? 0) >= head })
            #expect(try await stream.events(count: 1, timeout: .milliseconds(1)).isEmpty)
        }
    }

    /// Finding 3: a client that sends the request and leaves frees its slot at once.
    @Test func aStreamSlotIsFreedWhenItsConnectionCloses() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withLiveApp({ $0.events.heartbeat = .seconds(600); $0.events.streamsPerUser = 5 }) { client, port in
            let account = try await client.signup("leaver", tenant: tenant)
            for _ in 0..<6 {
                let gone = try await SSEClient.connect(port: port, path: "/v1/events", headers: ["Authorization": "Bearer \(account.accessToken)"])
                gone.close()
            }
            // Polls a real condition (the open-streams gauge).
            let closed = try await eventually(every: .milliseconds(20)) {
                try await client.call(.get, "/metrics").body.contains("lr_event_streams_open 0")
            }
            #expect(closed, "slots still held long before the 600 s heartbeat")
            var streams: [SSEClient] = []
            defer { streams.forEach { $0.close() } }
            for _ in 0..<5 { streams.append(try await account.stream(port: port)) }
            #expect(streams.allSatisfy { $0.status == 200 })
        }
    }

    /// Finding 6: what was withdrawn is never replayed, and a replay is bounded and paced.
    @Test func withdrawnContentIsNotReplayedAndReplaysAreBounded() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withLiveApp({ $0.events.replayMax = 2000; $0.events.replayRate = 500 }) { client, port in
            let author = try await client.signup("withdrawer", tenant: tenant)
            let tenantID = try await NotesFixture.tenantID(tenant)
            let before = try await eventPosition(tenantID: tenantID)
            let hidden = try await client.createNote(author, "soon private", lat: 1, lng: 1).id
            let deleted = try await client.createNote(author, "soon deleted", lat: 1, lng: 1).id
            let leaving = try await client.signup("leaving", tenant: tenant)
            _ = try await client.createNote(leaving, "soon account deleted", lat: 1, lng: 1)
            #expect(try await client.call(.patch, "/v1/notes/\(hidden)", json: ["visibility": "private"], token: author.accessToken).status == .ok)
            #expect(try await client.call(.delete, "/v1/notes/\(deleted)", token: author.accessToken).status == .noContent)
            #expect(try await client.call(.delete, "/v1/me", json: ["password": leaving.password], token: leaving.accessToken).status == .noContent)
            _ = try await client.createNote(author, "marker", lat: 1, lng: 1)
            let newcomer = try await client.signup("newcomer", tenant: tenant)
            let replay = try await newcomer.stream(port: port, lastEventID: String(before))
            defer { replay.close() }
            let events = try await replay.events(count: 4)
            #expect(events.map(\.event) == ["note.deleted", "note.deleted", "note.deleted", "note.created"])
            #expect(events.allSatisfy { !$0.data.contains("soon") })

            // More than LR_EVENTS_REPLAY_MAX events behind: a reset, not the log.
            let beforeBulk = try await eventPosition(tenantID: tenantID)
            try await insertNotes(tenant: tenant, userID: author.userID, count: 2500, writers: 1, body: "bulk")
            // Behind as far as the service knows: the tenant's horizon covers the bulk once no
            // transaction older than it is open. Another suite's transaction on the same Citus
            // worker can hold that horizon back a while (make test-citus saw it), and a stream
            // opened meanwhile replays what is final, rightly. So each try opens a stream and
            // looks at its first event, until one is the reset; none within the patience fails.
            var reset: SSEClient.Event?
            let wasReset = try await eventually(every: .milliseconds(200)) {
                let far = try await newcomer.stream(port: port, lastEventID: String(before))
                defer { far.close() }
                reset = try await far.events(count: 1).first
                return reset?.event == "reset"
            }
            #expect(wasReset, "a stream 2,500 events behind got \(reset?.event ?? "nothing") first, not a reset")
            #expect(try #require(reset).decode(API.ResetEvent.self).reason == "too_far_behind")

            // Within the bound, paced: 1,500 events at 500 a second after a burst of 1,000 take over a second.
            let resumeAt = try await TestEnvironment.ownerScalar("""
                SELECT id FROM events WHERE tenant_id = \(tenantID) AND id > \(beforeBulk) ORDER BY id OFFSET 999 LIMIT 1
                """, as: Int64.self)
            let started = ContinuousClock.now
            let paced = try await author.stream(port: port, lastEventID: String(resumeAt))
            defer { paced.close() }
            let pacedEvents = try await paced.events(count: 1500)
            let open = pacedEvents.count == 1500 ? "" : try await TestEnvironment.longTransactions()
            #expect(pacedEvents.count == 1500, """
                \(pacedEvents.count) events, the last \(pacedEvents.last?.id ?? "none"), from \(resumeAt); \
                closed: \(paced.isClosed); transactions open: \(open)
                """)
            #expect(ContinuousClock.now - started > .milliseconds(900))
        }
    }
}
