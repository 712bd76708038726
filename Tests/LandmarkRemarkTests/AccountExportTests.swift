import Foundation
import HummingbirdTesting
import Postgres
import Testing

@testable import LandmarkRemark

/// `GET /v1/me/export`: everything about the caller and nothing about anyone else, streamed a
/// page at a time.
@Suite struct AccountExportTests {
    @Test func theExportHoldsEverythingAboutTheCallerAndNoSecretsNorOthersData() async throws {
        let rig = try await MailTestRig(clock: TestClock())
        try await withApp(rig.configure) { client in
            let ana = try await client.signup("exporter", email: "exporter@example.test", tenant: rig.tenant)
            let bo = try await client.signup("other", tenant: rig.tenant)
            _ = try await client.call(.post, "/v1/auth/login", json: ["username": "exporter", "password": ana.password], tenant: rig.tenant)
            let publicNote = try await client.call(.post, "/v1/notes", json: ["body": "public «note» \"quoted\"", "lat": -33.86, "lng": 151.21], token: ana.accessToken)
            _ = try await client.call(.post, "/v1/notes", json: ["body": "private note", "lat": 1, "lng": 2, "visibility": "private"], token: ana.accessToken)
            _ = try await client.call(.post, "/v1/notes", json: ["body": "not mine", "lat": 1, "lng": 2], token: bo.accessToken)
            let place = try await client.call(.post, "/v1/places", json: ["name": "My corner", "lat": 3, "lng": 4], token: ana.accessToken)
            #expect(place.status == .created)
            let bosNote = try await client.call(.get, "/v1/users/other/notes", token: ana.accessToken).decode(API.NotePage.self).items[0]
            #expect(try await client.report(ana, "note", bosNote.id, reason: "spam").status == .created)
            #expect(try await client.call(.put, "/v1/me/blocks/other", token: ana.accessToken).status.code < 300)
            // Push: a device, a watched area, quiet hours, and a push sent (as the sender records it).
            let device = ["platform": "apns", "environment": "sandbox", "app_id": "com.example.landmarks"]
            #expect(try await client.call(.put, "/v1/me/devices/\(String(repeating: "ab", count: 32))", json: device, token: ana.accessToken).status == .noContent)
            #expect(try await client.call(.put, "/v1/me/devices/\(String(repeating: "cd", count: 32))", json: device, token: bo.accessToken).status == .noContent)
            let watch = try await client.call(.post, "/v1/me/watches", json: ["near": "-33.86,151.21", "radius_m": 800, "label": "Home"], token: ana.accessToken)
            #expect(watch.status == .created)
            _ = try await client.call(.post, "/v1/me/watches", json: ["near": "1,2", "radius_m": 800], token: bo.accessToken)
            let quiet = try await client.call(.patch, "/v1/me", json: ["time_zone": "Australia/Sydney", "quiet_hours": "22:00-07:00"], token: ana.accessToken)
            #expect(quiet.status == .ok, "\(quiet.body)")
            try await TestEnvironment.withOwnerPool { pool in
                try await pool.query("""
                    INSERT INTO pushes (tenant_id, user_id, watch_id, matches, delivered, sent_at)
                    SELECT tenant_id, user_id, id, 4, 1, now() FROM watches WHERE id = \(Int64(try watch.decode(API.Watch.self).id)!)
                    """)
            }
            try await rig.deliver()

            let response = try await client.call(.get, "/v1/me/export", token: ana.accessToken)
            #expect(response.status == .ok, "\(response.body)")
            #expect(response.headers[.contentDisposition]?.contains("exporter-export.json") == true)
            #expect(response.headers[.cacheControl] == "no-store")
            let export = try response.decode(API.AccountExport.self)
            #expect(export.account.username == "exporter" && export.account.email == "exporter@example.test" && export.account.hasPassword)
            #expect(export.sessions.count == 2)
            #expect(Set(export.notes.map(\.body)) == ["public «note» \"quoted\"", "private note"])
            #expect(export.notes.first { $0.visibility == "private" }?.lat == 1)
            #expect(export.notes.contains { $0.id == (try? publicNote.decode(API.Note.self).id) })
            #expect(export.places.map(\.name) == ["My corner"])
            #expect(export.reports.map(\.targetID) == [bosNote.id] && export.reports[0].reason == "spam")
            #expect(export.blocks.map(\.username) == ["other"])
            #expect(export.mail.map(\.kind) == ["verify_email"] && export.mail[0].state == "sent")
            #expect(export.devices.map(\.token) == [String(repeating: "ab", count: 32)] && export.devices[0].environment == "sandbox")
            #expect(export.watches.map(\.label) == ["Home"] && export.watches[0].radiusM == 800)
            #expect(export.pushes.map(\.notes) == [4] && export.pushes[0].watchID == export.watches[0].id)
            #expect(export.account.timeZone == "Australia/Sydney" && export.account.quietHours == "22:00-07:00")
            // No secret goes out: hashes, tokens, the mailed code.
            let code = try MailTestRig.code(in: try #require(try rig.server.messages().first))
            for secret in ["password_hash", "scrypt", "lr_rt_", "lr_at_", "code_hmac", code] {
                #expect(!response.body.contains(secret), "\(secret)")
            }
            #expect(try await client.call(.get, "/v1/me/export").status == .unauthorized)
        }
    }

    @Test func tenThousandNotesStreamAPageAtATime() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withLiveApp({ $0.accounts.exportPageSize = 500 }) { client, port in
            let writer = try await client.signup("prolific", tenant: tenant)
            let tenantID = try await NotesFixture.tenantID(tenant)
            try await TestEnvironment.withOwnerPool { pool in
                try await pool.query("""
                    INSERT INTO notes (tenant_id, user_id, body, location)
                    SELECT \(tenantID), \(Int64(writer.userID)!), 'note ' || g || ' ' || repeat('x', 200),
                           ST_SetSRID(ST_MakePoint(151 + g / 100000.0, -33), 4326)::geography
                    FROM generate_series(1, 10000) g
                    """)
            }
            let raw = try await RawHTTP.exchange(port: port, """
                GET /v1/me/export HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \(writer.accessToken)\r\nConnection: close\r\n\r\n
                """)
            let parts = raw.components(separatedBy: "\r\n\r\n")
            let head = parts[0].lowercased()
            #expect(head.hasPrefix("http/1.1 200") && head.contains("transfer-encoding: chunked") && !head.contains("content-length"))
            // The chunks as written: no write held more than a page of notes.
            var rest = Substring(parts.dropFirst().joined(separator: "\r\n\r\n"))
            var chunks: [Substring] = []
            while let line = rest.range(of: "\r\n"), let size = Int(rest[..<line.lowerBound], radix: 16), size > 0 {
                let start = line.upperBound
                let end = rest.utf8.index(start, offsetBy: size)
                chunks.append(rest[start..<end])
                rest = rest[rest.utf8.index(end, offsetBy: 2)...]
            }
            #expect(chunks.count >= 10_000 / 500)
            let largest = chunks.map(\.utf8.count).max() ?? 0
            #expect(largest <= 500 * 450, "the largest write was \(largest) bytes")
            let export = try decodeAPI(API.AccountExport.self, from: chunks.joined())
            #expect(export.notes.count == 10_000 && Set(export.notes.map(\.id)).count == 10_000)
            #expect(export.notes.first?.body.hasPrefix("note 10000 ") == true || export.notes.count == 10_000)
        }
    }
}
