import APNs
import Credentials
import Foundation
import HummingbirdTesting
import JWTKit
import Postgres
import TestAPNsServer
import Testing

@testable import LandmarkRemark

/// The push senders against the fake APNs (HTTP/2 over TLS on loopback): what a watcher's
/// devices receive, the hourly cap and its summary, sessions that end, devices APNs calls
/// gone, APNs busy or silent, and two replicas sending each push once. Each test drives
/// senders of its own, on a clock of its own.
@Suite(.timeLimit(.minutes(10))) struct PushDeliveryTests {
    static let topic = "com.example.landmarks"
    static let here = (lat: -33.8688, lng: 151.2093)

    /// A tenant with APNs credentials the fake trusts, and the fake.
    struct Rig: Sendable {
        let tenant: String
        let tenantID: Int64
        let fake: FakeAPNs
        /// An hour ahead of the database's clock, so every match written during the test is
        /// due; the senders and the fake APNs both read it.
        let clock: TestClock

        static func start() async throws -> Rig {
            let clock = TestClock(yearsAhead: 1.0 / (365 * 24))
            let fake = try await FakeAPNs.start(now: { clock.now() })
            let key = ES256PrivateKey()
            let (teamID, keyID) = ("TEAM" + String(Int.random(in: 100_000...999_999)), "KEY" + String(Int.random(in: 1_000_000...9_999_999)))
            try fake.trust(teamID: teamID, keyID: keyID, publicKeyPEM: key.publicKey.pemRepresentation, topics: [topic])
            let tenant = try await TestEnvironment.makeTenant()
            let tenantID = try await TestEnvironment.withOwnerPool { pool in
                try await pool.query("SELECT admin.set_tenant_apns(\(tenant), \(teamID), \(keyID), \(key.pemRepresentation))")
                return try await pool.query("SELECT id FROM tenants WHERE slug = \(tenant)")[0].decode(Int64.self)
            }
            return Rig(tenant: tenant, tenantID: tenantID, fake: fake, clock: clock)
        }

        func configure(_ configuration: inout AppConfiguration) {
            configuration.identity.dataKey = MailTestRig.dataKey
        }

        /// A sender of the test's own (as a replica's), on the rig's clock.
        func sender(
            pool: PostgresPool, perUserPerHour: Int = 3, timeout: Duration = .seconds(30),
            afterDelivered: @escaping @Sendable (Int64) async throws -> Void = { _ in }
        ) -> PushSender {
            var settings = PushSettings()
            settings.perUserPerHour = perUserPerHour
            settings.backoffCap = .seconds(30)
            var apns = APNsClient.Configuration()
            apns.productionURL = fake.url
            apns.sandboxURL = fake.url
            apns.caFile = fake.caFile
            apns.timeout = timeout
            return PushSender(
                pool: pool, credentials: TenantAPNsStore(secrets: try! SecretBox(key: MailTestRig.dataKey)),
                apns: APNsClient(configuration: apns, now: { clock.now() }), clock: clock.wallClock, settings: settings,
                logger: TestEnvironment.logger, afterDelivered: afterDelivered)
        }

        /// Drains the tenant's due pushes with a sender of the test's own.
        func deliver(perUserPerHour: Int = 3, timeout: Duration = .seconds(30)) async throws {
            try await TestEnvironment.withAppPool { pool in
                let sender = sender(pool: pool, perUserPerHour: perUserPerHour, timeout: timeout)
                try await sender.drain(tenantID: tenantID)
                await sender.apns.shutdown()
            }
        }

        /// Expands what the writes matched, as a sender does first; returns the notes taken.
        func expand() async throws -> Int {
            try await TestEnvironment.expandPushNotes(tenantID: tenantID)
        }

        /// The states of the tenant's matches, oldest first.
        func matchStates() async throws -> [String] {
            try await TestEnvironment.withOwnerPool { pool in
                try await pool.query("SELECT state FROM push_matches WHERE tenant_id = \(tenantID) ORDER BY id").map { try $0.decode(String.self) }
            }
        }

        /// What the fake received and took, in order.
        var delivered: [FakeAPNs.Received] { fake.received.filter { $0.status == 200 } }
    }

    static func deviceToken(_ n: Int) -> String { String(repeating: String(format: "%02x", n), count: 32) }

    /// Signs up `name`, registers `devices` (one session each), and watches around `here`.
    static func watcher(
        _ client: some TestClientProtocol, _ name: String, tenant: String, devices: [Int], label: String? = "Home"
    ) async throws -> [Account] {
        let first = try await client.signup(name, tenant: tenant)
        var sessions = [first]
        for (index, device) in devices.enumerated() {
            var account = first
            if index > 0 {
                let login = try await client.call(.post, "/v1/auth/login", json: ["username": name, "password": first.password], tenant: tenant)
                account.accessToken = try login.decode(API.TokenResponse.self).accessToken
                sessions.append(account)
            }
            let environment = index % 2 == 0 ? "production" : "sandbox"
            let put = try await client.call(
                .put, "/v1/me/devices/\(deviceToken(device))", json: ["platform": "apns", "environment": environment, "app_id": topic],
                token: account.accessToken)
            #expect(put.status == .noContent, "\(put.body)")
        }
        var watch: [String: Any] = ["near": "\(here.lat),\(here.lng)", "radius_m": 1000]
        if let label { watch["label"] = label }
        #expect(try await client.call(.post, "/v1/me/watches", json: watch, token: first.accessToken).status == .created)
        return sessions
    }

    @Test func aNoteGoesToEachOfTheWatchersDevicesOnceWithItsTitleAuthorAndId() async throws {
        let rig = try await Rig.start()
        try await withApp(rig.configure) { client in
            _ = try await Self.watcher(client, "watcher_p", tenant: rig.tenant, devices: [1, 2])
            let author = try await client.signup("author_p", tenant: rig.tenant)
            let note = try await client.createNote(author, "the ferry at dawn,\nthe harbour still", lat: Self.here.lat, lng: Self.here.lng).id
            try await rig.deliver()
            let pushes = rig.delivered
            #expect(Set(pushes.map(\.deviceToken)) == [Self.deviceToken(1), Self.deviceToken(2)] && pushes.count == 2)
            for push in pushes {
                #expect(push.http2 && push.headers["apns-topic"] == Self.topic && push.headers["apns-push-type"] == "alert")
                #expect(push.headers["apns-collapse-id"]?.hasPrefix("watch-") == true)
                let alert = (push.json?["aps"] as? [String: Any])?["alert"] as? [String: Any]
                #expect(alert?["title"] as? String == "Near Home")
                #expect(alert?["body"] as? String == "author_p: the ferry at dawn, the harbour still")
                #expect(push.json?["note_id"] as? String == note)
            }
            #expect(try await rig.matchStates() == ["sent"])
            // Sent once: another pass sends nothing.
            try await rig.deliver()
            #expect(rig.fake.received.count == 2)
            // The operator's key was sealed with the data key on first use.
            let sealed = try await TestEnvironment.ownerScalar(
                "SELECT apns_private_key IS NULL AND apns_private_key_sealed IS NOT NULL FROM tenants WHERE id = \(rig.tenantID)", as: Bool.self)
            #expect(sealed)
        }
        await rig.fake.stop()
    }

    @Test func threePushesAnHourThenOneSummaryOfWhatWaited() async throws {
        let rig = try await Rig.start()
        try await withApp(rig.configure) { client in
            _ = try await Self.watcher(client, "capped_p", tenant: rig.tenant, devices: [3])
            let author = try await client.signup("busy_author_p", tenant: rig.tenant)
            let other = try await client.signup("other_author_p", tenant: rig.tenant)
            var notes: [String] = []
            for index in 0..<5 {
                notes.append(try await client.createNote(index == 4 ? other : author, "note \(index)", lat: Self.here.lat, lng: Self.here.lng).id)
                try await rig.deliver()
                rig.clock.advance(60)
            }
            #expect(rig.delivered.count == 3, "the hour's three")
            #expect(try await rig.matchStates() == ["sent", "sent", "sent", "pending", "pending"])
            // An hour after the first push, the two that waited go as one.
            rig.clock.advance(3600 - 5 * 60 + 1)
            try await rig.deliver()
            #expect(rig.delivered.count == 4)
            let summary = try #require(rig.delivered.last?.json)
            let alert = (summary["aps"] as? [String: Any])?["alert"] as? [String: Any]
            #expect(alert?["title"] as? String == "2 new notes near Home")
            #expect(alert?["body"] as? String == "busy_author_p, other_author_p")
            #expect(summary["note_ids"] as? [String] == [notes[4], notes[3]])
            #expect(try await rig.matchStates() == ["sent", "sent", "sent", "collapsed", "collapsed"])
            // More at once than the hour has room for: one summary, even with room for one.
            rig.clock.advance(2 * 3600)
            for index in 0..<4 { _ = try await client.createNote(author, "burst \(index)", lat: Self.here.lat, lng: Self.here.lng) }
            try await rig.deliver()
            let burst = (rig.delivered.last?.json?["aps"] as? [String: Any])?["alert"] as? [String: Any]
            #expect(rig.delivered.count == 5 && burst?["title"] as? String == "4 new notes near Home")
        }
        await rig.fake.stop()
    }

    @Test func anEndedSessionsDeviceGetsNothingAndAGoneDeviceIsRemoved() async throws {
        let rig = try await Rig.start()
        try await withApp(rig.configure) { client in
            let sessions = try await Self.watcher(client, "leaver_p", tenant: rig.tenant, devices: [4, 5, 6])
            let author = try await client.signup("author_q", tenant: rig.tenant)
            #expect(try await client.call(.post, "/v1/auth/logout", token: sessions[1].accessToken).status == .noContent)
            rig.fake.reply(to: Self.deviceToken(6), with: .status(410, reason: "Unregistered"))
            _ = try await client.createNote(author, "hello", lat: Self.here.lat, lng: Self.here.lng)
            try await rig.deliver()
            #expect(rig.delivered.map(\.deviceToken) == [Self.deviceToken(4)], "not the signed-out session's, not the gone one")
            #expect(!rig.fake.received.contains { $0.deviceToken == Self.deviceToken(5) })
            let left = try await TestEnvironment.withOwnerPool { pool in
                try await pool.query("SELECT token FROM devices WHERE tenant_id = \(rig.tenantID) ORDER BY token").map { try $0.decode(String.self) }
            }
            #expect(left == [Self.deviceToken(4), Self.deviceToken(5)], "the gone one removed")
            // Blocked after the match was expanded, before the send: dropped, not sent.
            _ = try await client.createNote(author, "again", lat: Self.here.lat, lng: Self.here.lng)
            #expect(try await rig.expand() == 1)
            #expect(try await client.call(.put, "/v1/me/blocks/author_q", token: sessions[0].accessToken).status == .noContent)
            try await rig.deliver()
            #expect(rig.delivered.count == 1)
            #expect(try await rig.matchStates() == ["sent", "dropped"])
        }
        await rig.fake.stop()
    }

    /// Delivery is at least once: a sender that dies between APNs's 200 and recording it leaves
    /// the push to the next sender after its lease, which sends the same push again (the same
    /// collapse id: the phone shows one), and no more.
    @Test func aSenderThatDiesAfterAPNsTookAPushLeavesAtMostOneMoreOfTheSame() async throws {
        let rig = try await Rig.start()
        try await withApp(rig.configure) { client in
            _ = try await Self.watcher(client, "mortal_p", tenant: rig.tenant, devices: [7])
            let author = try await client.signup("author_d", tenant: rig.tenant)
            _ = try await client.createNote(author, "once, or twice at most", lat: Self.here.lat, lng: Self.here.lng)
            try await TestEnvironment.withAppPool { pool in
                let a = rig.sender(pool: pool) { _ in throw Died() }
                await #expect(throws: Died.self) { try await a.drain(tenantID: rig.tenantID) }
                await a.apns.shutdown()
                #expect(rig.delivered.count == 1)
                #expect(try await rig.matchStates() == ["pending"])
                // B finds the queue held by A until A's lease ends, then sends it again.
                let b = rig.sender(pool: pool)
                try await b.drain(tenantID: rig.tenantID)
                #expect(rig.delivered.count == 1)
                rig.clock.advance(PushSettings().lease.timeInterval + 1)
                try await b.drain(tenantID: rig.tenantID)
                try await b.drain(tenantID: rig.tenantID)
                await b.apns.shutdown()
            }
            let copies = rig.delivered
            #expect(copies.count == 2, "at least once, and no more than once again")
            #expect(Set(copies.map { $0.headers["apns-collapse-id"] ?? "" }).count == 1 && Set(copies.map(\.payload)).count == 1)
            #expect(try await rig.matchStates() == ["sent"])
        }
        await rig.fake.stop()
    }

    @Test func aBusyFailingOrSilentAPNsRestsTheQueueAndTheMatchWaits() async throws {
        let rig = try await Rig.start()
        try await withApp(rig.configure) { client in
            _ = try await Self.watcher(client, "patient_p", tenant: rig.tenant, devices: [7])
            let author = try await client.signup("author_r", tenant: rig.tenant)
            rig.fake.reply(
                to: Self.deviceToken(7), with: .status(429, reason: "TooManyRequests"), .status(503, reason: "ServiceUnavailable"), .hang)
            _ = try await client.createNote(author, "eventually", lat: Self.here.lat, lng: Self.here.lng)
            let statuses: [Int] = [429, 503]
            for attempt in statuses.indices {
                try await rig.deliver(timeout: .seconds(5))
                #expect(rig.fake.received.map(\.status) == Array(statuses.prefix(attempt + 1)))
                #expect(try await rig.matchStates() == ["pending"])
                // Resting: nothing is tried before the rest ends.
                try await rig.deliver(timeout: .seconds(5))
                #expect(rig.fake.received.count == attempt + 1)
                rig.clock.advance(31)
            }
            // Silent: the request is given up after the timeout, and the queue rests again.
            try await rig.deliver(timeout: .seconds(5))
            #expect(rig.fake.received.count == 3 && rig.delivered.isEmpty)
            #expect(try await rig.matchStates() == ["pending"])
            let error = try await TestEnvironment.ownerScalar("SELECT last_error FROM push_queues WHERE tenant_id = \(rig.tenantID)", as: String.self)
            #expect(error.hasPrefix("no answer"))
            rig.clock.advance(31)
            try await rig.deliver(timeout: .seconds(5))
            #expect(rig.delivered.count == 1)
            #expect(try await rig.matchStates() == ["sent"])
        }
        await rig.fake.stop()
    }

    @Test func quietHoursAcrossTheTimeZonesMidnightHoldPushesUntilTheyEnd() async throws {
        let rig = try await Rig.start()
        try await withApp(rig.configure) { client in
            let sessions = try await Self.watcher(client, "sleeper_p", tenant: rig.tenant, devices: [40])
            let set = try await client.call(
                .patch, "/v1/me", json: ["time_zone": "Pacific/Auckland", "quiet_hours": "22:00-07:00"], token: sessions[0].accessToken)
            #expect(set.status == .ok, "\(set.body)")
            let author = try await client.signup("night_owl_p", tenant: rig.tenant)
            // To 23:30 in Auckland, on the rig's clock.
            let start = rig.clock.now()
            let toHalfPastEleven = try await TestEnvironment.ownerScalar("""
                SELECT extract(epoch FROM (((\(start) AT TIME ZONE 'Pacific/Auckland')::date + time '23:30') AT TIME ZONE 'Pacific/Auckland') - \(start))::float8
                """, as: Double.self)
            rig.clock.advance(toHalfPastEleven < 0 ? toHalfPastEleven + 86400 : toHalfPastEleven)
            for index in 0..<4 { _ = try await client.createNote(author, "late \(index)", lat: Self.here.lat, lng: Self.here.lng) }
            try await rig.deliver()
            #expect(rig.fake.received.isEmpty, "nothing at 23:30")
            // Past midnight, still quiet; at 06:59 too.
            rig.clock.advance(7 * 3600 + 29 * 60)
            try await rig.deliver()
            #expect(rig.fake.received.isEmpty, "nothing at 06:59")
            let until = try await TestEnvironment.ownerScalar("""
                SELECT to_char(min(next_attempt_at) AT TIME ZONE 'Pacific/Auckland', 'HH24:MI') FROM push_matches WHERE tenant_id = \(rig.tenantID)
                """, as: String.self)
            #expect(until == "07:00")
            rig.clock.advance(61)
            try await rig.deliver()
            let alert = (rig.delivered.last?.json?["aps"] as? [String: Any])?["alert"] as? [String: Any]
            #expect(rig.delivered.count == 1 && alert?["title"] as? String == "4 new notes near Home", "what waited goes as one at 07:00")
        }
        await rig.fake.stop()
    }

    @Test func twoReplicasSendEachPushOnce() async throws {
        let rig = try await Rig.start()
        try await withApp(rig.configure) { client in
            var watchers: [String] = []
            for index in 0..<6 {
                _ = try await Self.watcher(client, "crowd_\(index)_p", tenant: rig.tenant, devices: [20 + index])
                watchers.append("crowd_\(index)_p")
            }
            let author = try await client.signup("author_s", tenant: rig.tenant)
            for index in 0..<3 { _ = try await client.createNote(author, "news \(index)", lat: Self.here.lat, lng: Self.here.lng) }
            try await TestEnvironment.withAppPool { pool in
                let (a, b) = (rig.sender(pool: pool), rig.sender(pool: pool))
                // Each as its replica's loop would, at once (not deliverDue: another test's tenant
                // is not this fake's to send to).
                async let first: Void = a.drain(tenantID: rig.tenantID)
                async let second: Void = b.drain(tenantID: rig.tenantID)
                _ = try await (first, second)
                // Whichever held the queue, the other may have found it held: a last pass each.
                try await a.drain(tenantID: rig.tenantID)
                try await b.drain(tenantID: rig.tenantID)
                await a.apns.shutdown()
                await b.apns.shutdown()
            }
            let pushes = rig.delivered
            #expect(pushes.count == 18, "6 watchers, 3 notes each")
            let keys = pushes.map { "\($0.deviceToken)/\($0.json?["note_id"] as? String ?? "")" }
            #expect(Set(keys).count == keys.count, "none twice")
            #expect(Set(try await rig.matchStates()) == ["sent"])
        }
        await rig.fake.stop()
    }
}
