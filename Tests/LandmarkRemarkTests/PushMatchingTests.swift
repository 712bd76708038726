import Foundation
import HummingbirdTesting
import LandmarkRemark
import Postgres
import Testing

/// Matching new notes against watches (issue 39, migrations 0049 and 0052): done by the database
/// as the note is written, through the watches' index, into one `push_notes` row per note,
/// which a sender expands into `push_matches`, one per watcher who may be told. Each test
/// writes notes through the API, expands as a sender would, and reads what was matched.
@Suite(.timeLimit(.minutes(10))) struct PushMatchingTests {
    /// A tenant that can push: APNs credentials set (no sender runs here, so the key is never
    /// opened). Matching is off in a tenant without them.
    static func pushTenant() async throws -> String {
        let tenant = try await TestEnvironment.makeTenant()
        try await TestEnvironment.withOwnerPool { pool in
            try await pool.query("SELECT admin.set_tenant_apns(\(tenant), 'TEAM123456', 'KEY1234567', '-----BEGIN PRIVATE KEY-----\nnot used')")
        }
        return tenant
    }

    /// The watchers a note was matched to, with the watch each match names, once a sender
    /// expanded what the write matched.
    static func matches(note: String) async throws -> [(user: String, watch: String)] {
        try await TestEnvironment.withOwnerPool { pool in
            // The tenant first: on Citus a function that queries shards cannot run per row of one.
            let tenantID = try await pool.query("SELECT tenant_id FROM notes WHERE id = \(Int64(note)!)")[0].decode(Int64.self, column: 0)
            _ = try await TestEnvironment.expandPushNotes(tenantID: tenantID)
            return try await pool.query("SELECT user_id, watch_id FROM push_matches WHERE note_id = \(Int64(note)!) ORDER BY user_id").map { row in
                let (user, watch) = try row.decode((Int64, Int64).self)
                return (String(user), String(watch))
            }
        }
    }

    static func matched(note: String) async throws -> [String] { try await matches(note: note).map(\.user) }

    static var device: [String: Any] { ["platform": "apns", "environment": "production", "app_id": "com.example.landmarks"] }

    /// A user with a device, watching `near` within `radius` metres.
    static func watcher(
        _ client: some TestClientProtocol, _ name: String, tenant: String, near: (lat: Double, lng: Double), radius: Int, label: String? = nil
    ) async throws -> (account: Account, watch: String) {
        let account = try await client.signup(name, tenant: tenant)
        let token = String(repeating: String(format: "%02x", name.utf8.reduce(0) { ($0 &+ $1) }), count: 32)
        #expect(try await client.call(.put, "/v1/me/devices/\(token)", json: device, token: account.accessToken).status == .noContent)
        let watch = try await Self.watch(client, account, near: near, radius: radius, label: label)
        return (account, watch)
    }

    static func watch(
        _ client: some TestClientProtocol, _ account: Account, near: (lat: Double, lng: Double), radius: Int, label: String? = nil
    ) async throws -> String {
        var json: [String: Any] = ["near": "\(near.lat),\(near.lng)", "radius_m": radius]
        if let label { json["label"] = label }
        let response = try await client.call(.post, "/v1/me/watches", json: json, token: account.accessToken)
        #expect(response.status == .created, "\(response.body)")
        return try response.decode(API.Watch.self).id
    }

    @Test func aNoteIsMatchedByGeodesicDistanceToTheMetreAndAcrossTheAntimeridian() async throws {
        let tenant = try await Self.pushTenant()
        try await withApp { client in
            let author = try await client.signup("author_m", tenant: tenant)
            // At 60° north a degree of longitude is half a degree of latitude: a circle drawn
            // in degrees would be wrong by hundreds of metres here.
            let centre = (lat: 60.17, lng: 24.94)
            let (helsinki, _) = try await Self.watcher(client, "helsinki_m", tenant: tenant, near: centre, radius: 1000)
            for azimuth in stride(from: 0.0, to: 360, by: 45) {
                let inside = try await NotesFixture.project(lat: centre.lat, lng: centre.lng, distance: 999, azimuth: azimuth)
                let outside = try await NotesFixture.project(lat: centre.lat, lng: centre.lng, distance: 1001, azimuth: azimuth)
                let near = try await client.createNote(author, "inside at \(azimuth)", lat: inside.lat, lng: inside.lng).id
                let far = try await client.createNote(author, "outside at \(azimuth)", lat: outside.lat, lng: outside.lng).id
                #expect(try await Self.matched(note: near) == [helsinki.userID], "999 m at \(azimuth)°")
                #expect(try await Self.matched(note: far).isEmpty, "1001 m at \(azimuth)°")
            }
            // Fiji: a watch just west of the antimeridian hears a note just east of it.
            let (fiji, _) = try await Self.watcher(client, "fiji_m", tenant: tenant, near: (lat: -16.5, lng: 179.995), radius: 2000)
            let across = try await client.createNote(author, "across the line", lat: -16.5, lng: -179.995).id
            let beyond = try await client.createNote(author, "too far across", lat: -16.5, lng: -179.97).id
            #expect(try await Self.matched(note: across) == [fiji.userID])
            #expect(try await Self.matched(note: beyond).isEmpty)
            // -180 and 180 are one meridian.
            let onTheLine = try await client.createNote(author, "on the line", lat: -16.5, lng: -180).id
            #expect(try await Self.matched(note: onTheLine) == [fiji.userID])
            // And near the pole, where every meridian meets.
            let (pole, _) = try await Self.watcher(client, "pole_m", tenant: tenant, near: (lat: 89.995, lng: 0), radius: 2000)
            let otherSide = try await client.createNote(author, "other side of the pole", lat: 89.995, lng: 180).id
            #expect(try await Self.matched(note: otherSide) == [pole.userID])
        }
    }

    @Test func noMatchForOnesOwnNoteAPrivateOneAHiddenAuthorAHeldNoteOrAWatcherWithoutDevice() async throws {
        let tenant = try await Self.pushTenant()
        let here = (lat: -33.8688, lng: 151.2093)
        try await withApp { client in
            let author = try await client.signup("author_n", tenant: tenant)
            let (fan, _) = try await Self.watcher(client, "fan_n", tenant: tenant, near: here, radius: 500)
            let (blocker, _) = try await Self.watcher(client, "blocker_n", tenant: tenant, near: here, radius: 500)
            let (blocked, _) = try await Self.watcher(client, "blocked_n", tenant: tenant, near: here, radius: 500)
            let (reporter, _) = try await Self.watcher(client, "reporter_n", tenant: tenant, near: here, radius: 500)
            let deviceless = try await client.signup("deviceless_n", tenant: tenant)
            _ = try await Self.watch(client, deviceless, near: here, radius: 500)
            // Another tenant's watcher at the same spot hears nothing of this one.
            let elsewhere = try await Self.pushTenant()
            let (stranger, _) = try await Self.watcher(client, "stranger_n", tenant: elsewhere, near: here, radius: 500)
            // The author watches too, and never hears of their own notes.
            #expect(try await client.call(.put, "/v1/me/devices/\(String(repeating: "ee", count: 32))", json: Self.device, token: author.accessToken).status == .noContent)
            _ = try await Self.watch(client, author, near: here, radius: 500)

            #expect(try await client.call(.put, "/v1/me/blocks/author_n", token: blocker.accessToken).status == .noContent)
            #expect(try await client.call(.put, "/v1/me/blocks/blocked_n", token: author.accessToken).status == .noContent)
            let report = try await client.call(
                .post, "/v1/reports", json: ["target": ["type": "user", "id": author.userID], "reason": "spam"], token: reporter.accessToken)
            #expect(report.status == .created, "\(report.body)")

            let note = try await client.createNote(author, "a public note", lat: here.lat, lng: here.lng).id
            // The write keeps one row for the note: every watcher in reach but the author. The
            // rest is the sender's to sort out.
            #expect(try await TestEnvironment.ownerScalar(
                "SELECT cardinality(watchers) FROM push_notes WHERE note_id = \(Int64(note)!)", as: Int.self) == 5)
            #expect(try await Self.matched(note: note) == [fan.userID], "only the fan: not the author, either side of a block, the reporter, no device, another tenant")
            #expect(try await TestEnvironment.ownerScalar("SELECT count(*)::int FROM push_notes WHERE note_id = \(Int64(note)!)", as: Int.self) == 0)
            #expect(try await Self.matched(note: try await client.createNote(author, "a private one", lat: here.lat, lng: here.lng, visibility: "private").id).isEmpty)
            _ = stranger

            // A tenant that cannot push (no APNs credentials) does no matching at all.
            let mute = try await TestEnvironment.makeTenant()
            _ = try await Self.watcher(client, "listener_n", tenant: mute, near: here, radius: 500)
            let unheard = try await client.createNote(try await client.signup("author_mute", tenant: mute), "nobody hears", lat: here.lat, lng: here.lng).id
            #expect(try await TestEnvironment.ownerScalar("SELECT count(*)::int FROM push_notes WHERE note_id = \(Int64(unheard)!)", as: Int.self) == 0)
            #expect(try await Self.matched(note: unheard).isEmpty)

            // A note held by the word list is matched when a moderator releases it, not before.
            try await TestEnvironment.withOwnerPool {
                try await $0.query("SELECT 1 FROM admin.set_tenant_setting(\(tenant), 'filter_words', 'bananas')")
                try await $0.query("SELECT 1 FROM admin.set_tenant_setting(\(tenant), 'filter_action', 'hold')")
            }
            let held = try await client.createNote(author, "selling bananas", lat: here.lat, lng: here.lng)
            #expect(held.moderation == "pending")
            #expect(try await Self.matched(note: held.id).isEmpty)
            try await TestEnvironment.withOwnerPool { try await $0.query("UPDATE notes SET moderation = NULL WHERE id = \(Int64(held.id)!)") }
            #expect(try await Self.matched(note: held.id) == [fan.userID])

            // A private note made public is matched then; made private and public again, not twice.
            let secret = try await client.createNote(author, "soon public", lat: here.lat, lng: here.lng, visibility: "private").id
            for visibility in ["public", "private", "public"] {
                let changed = try await client.call(.patch, "/v1/notes/\(secret)", json: ["visibility": visibility], token: author.accessToken)
                #expect(changed.status == .ok, "\(changed.body)")
            }
            #expect(try await Self.matched(note: secret) == [fan.userID])
            #expect(try await TestEnvironment.ownerScalar("SELECT count(*)::int FROM push_matches WHERE note_id = \(Int64(secret)!)", as: Int.self) == 1)
            // Edited or moved, a public note is not news.
            let edited = try await client.call(.patch, "/v1/notes/\(note)", json: ["body": "edited"], token: author.accessToken)
            #expect(edited.status == .ok)
            #expect(try await TestEnvironment.ownerScalar("SELECT count(*)::int FROM push_matches WHERE note_id = \(Int64(note)!)", as: Int.self) == 1)
        }
    }

    @Test func overlappingWatchesMatchOnceByTheSmallestAndAGoneWatchOrDeviceMatchesNothing() async throws {
        let tenant = try await Self.pushTenant()
        let here = (lat: 51.5074, lng: -0.1278)
        try await withApp { client in
            let author = try await client.signup("author_o", tenant: tenant)
            let (fan, city) = try await Self.watcher(client, "fan_o", tenant: tenant, near: here, radius: 20_000, label: "London")
            let home = try await Self.watch(client, fan, near: here, radius: 300, label: "Home")
            let note = try await client.createNote(author, "round the corner", lat: here.lat, lng: here.lng).id
            let matches = try await Self.matches(note: note)
            #expect(matches.map(\.user) == [fan.userID] && matches.map(\.watch) == [home])
            let across = try await client.createNote(author, "across town", lat: 51.55, lng: -0.2).id
            #expect(try await Self.matches(note: across).map(\.watch) == [city])

            // The watch deleted: its matches go with it, and it matches nothing more.
            #expect(try await client.call(.delete, "/v1/me/watches/\(city)", token: fan.accessToken).status == .noContent)
            #expect(try await Self.matched(note: across).isEmpty)
            #expect(try await Self.matched(note: try await client.createNote(author, "across again", lat: 51.55, lng: -0.2).id).isEmpty)
            // The device removed: nothing to send to, nothing matched.
            let token = String(repeating: String(format: "%02x", "fan_o".utf8.reduce(0) { ($0 &+ $1) }), count: 32)
            #expect(try await client.call(.delete, "/v1/me/devices/\(token)", token: fan.accessToken).status == .noContent)
            #expect(try await Self.matched(note: try await client.createNote(author, "round the corner again", lat: here.lat, lng: here.lng).id).isEmpty)
        }
    }
}
