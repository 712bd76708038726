import Foundation
import HTTPTypes
import HummingbirdTesting
import LandmarkRemark
import Testing

extension TestClientProtocol {
    /// Reports `type` `id` as `account`.
    func report(_ account: Account, _ type: String, _ id: String, reason: String = "harassment", detail: String? = nil) async throws -> APIResponse {
        var json: [String: Any] = ["target": ["type": type, "id": id], "reason": reason]
        if let detail { json["detail"] = detail }
        return try await call(.post, "/v1/reports", json: json, token: account.accessToken)
    }

    /// Whether `account` finds note `id` by id and in the newest and nearest lists.
    func sees(note id: String, as account: Account) async throws -> Bool {
        let single = try await call(.get, "/v1/notes/\(id)", token: account.accessToken).status == .ok
        let newest = try await ids("/v1/notes", token: account.accessToken).contains(id)
        let nearest = try await ids("/v1/notes?near=-33.86,151.21", token: account.accessToken).contains(id)
        #expect(single == newest && newest == nearest, "the read paths disagree about note \(id)")
        return single
    }
}

/// Reports (issue 34): `POST /v1/reports`, `GET /v1/me/reports`, the target hidden from its
/// reporter at once, and held for a moderator when the tenant's threshold of reporters is met.
@Suite(.timeLimit(.minutes(10))) struct ReportsTests {
    static func setThreshold(_ threshold: Int, tenant: String) async throws {
        try await TestEnvironment.withOwnerPool { try await $0.query("UPDATE tenants SET report_threshold = \(threshold) WHERE slug = \(tenant)") }
    }

    @Test func aReportIsFiledOnceAndHidesItsTargetFromTheReporterAlone() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let author = try await client.signup("author_r", tenant: tenant)
            let reporter = try await client.signup("reporter_r", tenant: tenant)
            let bystander = try await client.signup("bystander_r", tenant: tenant)
            let note = try await client.createNote(author, "a rude remark", lat: -33.86, lng: 151.21).id
            let first = try await client.report(reporter, "note", note, reason: "self_harm", detail: "  50% _off_ \\ '; DROP TABLE reports; --  ")
            #expect(first.status == .created, "\(first.body)")
            let report = try first.decode(API.Report.self)
            #expect(report.target.type == "note" && report.target.id == note)
            #expect(report.reason == "self_harm" && report.state == "open")
            #expect(report.detail == "50% _off_ \\ '; DROP TABLE reports; --")
            #expect(try await !client.sees(note: note, as: reporter))
            #expect(try await client.sees(note: note, as: bystander))
            #expect(try await client.sees(note: note, as: author))
            // Again, though the note is now hidden from the reporter: the same report.
            let again = try await client.report(reporter, "note", note, reason: "spam")
            #expect(again.status == .ok)
            #expect(try again.decode(API.Report.self) == report)
            let mine = try await client.call(.get, "/v1/me/reports", token: reporter.accessToken).decode(API.ReportPage.self)
            #expect(mine.items == [report])
            // The author learns nothing: the note shows as before, and their list of reports is theirs.
            let shown = try await client.call(.get, "/v1/notes/\(note)", token: author.accessToken).decode(API.Note.self)
            #expect(shown.moderation == nil)
            #expect(try await client.call(.get, "/v1/me/reports", token: author.accessToken).decode(API.ReportPage.self).items.isEmpty)
        }
    }

    @Test func ownContentUnseenTargetsAndBadBodiesAreRefusedAndChangeNothing() async throws {
        let (tenant, other) = (try await TestEnvironment.makeTenant(), try await TestEnvironment.makeTenant())
        try await withApp { client in
            let me = try await client.signup("self_r", tenant: tenant)
            let them = try await client.signup("them_r", tenant: tenant)
            let stranger = try await client.signup("stranger_r", tenant: other)
            let mine = try await client.createNote(me, "mine", lat: 0, lng: 0).id
            let myPlace = try await client.createPlace(me, "My corner", lat: 0, lng: 0).id
            let theirPrivate = try await client.createNote(them, "secret", lat: 0, lng: 0, visibility: "private").id
            let elsewhere = try await client.createNote(stranger, "another tenant", lat: 0, lng: 0).id
            #expect(try await client.report(me, "note", mine).code == "cannot_report_own_content")
            #expect(try await client.report(me, "place", myPlace).code == "cannot_report_own_content")
            #expect(try await client.report(me, "user", me.userID).code == "cannot_report_own_content")
            #expect(try await client.report(me, "note", theirPrivate).code == "not_found")
            #expect(try await client.report(me, "note", elsewhere).code == "not_found")
            #expect(try await client.report(me, "user", stranger.userID).code == "not_found")
            #expect(try await client.report(me, "note", "9223372036854775807").code == "not_found")
            let bad: [([String: Any], [String])] = [
                ([:], ["reason", "target"]),
                (["target": ["type": "comment", "id": mine], "reason": "spam"], ["target.type"]),
                (["target": ["type": "note", "id": 7], "reason": "spam"], ["target.id"]),
                (["target": ["type": "note", "id": mine], "reason": "SPAM"], ["reason"]),
                (["target": ["type": "note", "id": mine], "reason": "spam", "detail": String(repeating: "é", count: 501)], ["detail"]),
                (["target": ["type": "note", "id": mine, "extra": 1], "reason": "spam", "why": "x"], ["target.extra", "why"]),
            ]
            for (json, fields) in bad {
                let response = try await client.call(.post, "/v1/reports", json: json, token: them.accessToken)
                #expect(response.code == "validation_failed", "\(json): \(response.body)")
                #expect(response.errorFields.sorted() == fields, "\(json)")
            }
            #expect(try await client.call(.post, "/v1/reports", raw: "[]", token: them.accessToken).status == .badRequest)
            #expect(try await client.call(.post, "/v1/reports", json: ["target": ["type": "note", "id": mine], "reason": "spam"]).status == .unauthorized)
            // 500 characters is the most, and blank is none.
            let longest = try await client.report(them, "note", mine, detail: String(repeating: "é", count: 500))
            #expect(longest.status == .created)
            let mineToo = try await client.report(them, "user", me.userID, detail: "   ")
            #expect(try mineToo.decode(API.Report.self).detail == nil)
            #expect(try await client.call(.get, "/v1/me/reports", token: them.accessToken).decode(API.ReportPage.self).items.count == 2)
        }
    }

    /// Reporting a user hides them from the reporter as a one-way block would; enough
    /// reporters hold the account: its notes and profile gone for everyone but itself.
    @Test func aReportedUserIsHiddenFromTheReporterAndHeldAtTheThreshold() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await Self.setThreshold(2, tenant: tenant)
        try await withApp { client in
            let troll = try await client.signup("troll_u", tenant: tenant)
            let (first, second, bystander) = (
                try await client.signup("first_u", tenant: tenant), try await client.signup("second_u", tenant: tenant),
                try await client.signup("bystander_u", tenant: tenant))
            let note = try await client.createNote(troll, "bait", lat: -33.86, lng: 151.21).id
            func profile(_ viewer: Account) async throws -> HTTPResponse.Status {
                try await client.call(.get, "/v1/users/troll_u", token: viewer.accessToken).status
            }
            #expect(try await client.report(first, "user", troll.userID).status == .created)
            #expect(try await profile(first) == .notFound)
            #expect(try await !client.sees(note: note, as: first))
            #expect(try await client.sees(note: note, as: bystander))
            #expect(try await client.report(second, "user", troll.userID).status == .created)
            #expect(try await profile(bystander) == .notFound)
            #expect(try await !client.sees(note: note, as: bystander))
            #expect(try await client.sees(note: note, as: troll))
            #expect(try await profile(troll) == .ok)
            // The held account is told, so its app can say why no one sees it.
            let held = try await client.call(.get, "/v1/me", token: troll.accessToken).decode(API.Me.self)
            #expect(held.moderation == "pending")
            let other = try await client.call(.get, "/v1/me", token: first.accessToken).decode(API.Me.self)
            #expect(other.moderation == nil)
        }
    }

    @Test func aReportedPlaceIsHiddenFromTheReporterAndHeldAtTheThreshold() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await Self.setThreshold(2, tenant: tenant)
        try await withApp { client in
            let maker = try await client.signup("maker_p", tenant: tenant)
            let (first, second, bystander) = (
                try await client.signup("first_p", tenant: tenant), try await client.signup("second_p", tenant: tenant),
                try await client.signup("bystander_p", tenant: tenant))
            let place = try await client.createPlace(maker, "Rude name", lat: -33.86, lng: 151.21).id
            func sees(_ viewer: Account) async throws -> Bool {
                let single = try await client.call(.get, "/v1/places/\(place)", token: viewer.accessToken).status == .ok
                let listed = try await client.call(.get, "/v1/places?near=-33.86,151.21", token: viewer.accessToken)
                    .decode(API.PlacePage.self).items.contains { $0.id == place }
                #expect(single == listed)
                return single
            }
            #expect(try await client.report(first, "place", place).status == .created)
            #expect(try await !sees(first))
            #expect(try await sees(bystander))
            #expect(try await client.report(second, "place", place).status == .created)
            #expect(try await !sees(bystander))
            #expect(try await sees(maker))
            let held = try await client.call(.get, "/v1/places/\(place)", token: maker.accessToken).decode(API.Place.self)
            #expect(held.moderation == "pending")
        }
    }

    /// Five reporters at once against a threshold of five: each locks the note before
    /// counting, so the fifth report holds it.
    @Test func concurrentReportsAreCountedOneAtATime() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await Self.setThreshold(5, tenant: tenant)
        try await withApp { client in
            let author = try await client.signup("author_c", tenant: tenant)
            let note = try await client.createNote(author, "contested", lat: 0, lng: 0).id
            var reporters: [Account] = []
            for index in 0..<5 { reporters.append(try await client.signup("reporter_c\(index)", tenant: tenant)) }
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for reporter in reporters {
                    group.addTask { try await client.report(reporter, "note", note).status.code }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses == [201, 201, 201, 201, 201])
            let held = try await client.call(.get, "/v1/notes/\(note)", token: author.accessToken).decode(API.Note.self)
            #expect(held.moderation == "pending")
        }
    }

    @Test func floodsAreRefusedPerUserAndPerTenant() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp({ $0.safety.reportsPerUserPerHour = 2; $0.safety.reportsPerTenantPerHour = 3 }) { client in
            let author = try await client.signup("author_f", tenant: tenant)
            let (one, two) = (try await client.signup("one_f", tenant: tenant), try await client.signup("two_f", tenant: tenant))
            var notes: [String] = []
            for index in 0..<4 { notes.append(try await client.createNote(author, "note \(index)", lat: 0, lng: 0).id) }
            #expect(try await client.report(one, "note", notes[0]).status == .created)
            #expect(try await client.report(one, "note", notes[1]).status == .created)
            let third = try await client.report(one, "note", notes[2])
            #expect(third.code == "rate_limited")
            let wait = try #require(third.headers[.retryAfter].flatMap(Int.init))
            #expect((3500...3600).contains(wait))
            #expect(try await client.report(two, "note", notes[2]).status == .created)
            #expect(try await client.report(two, "note", notes[3]).code == "rate_limited")  // the tenant's three
            let filed = try await client.call(.get, "/v1/me/reports", token: one.accessToken).decode(API.ReportPage.self)
            #expect(filed.items.count == 2)
        }
    }

    @Test func aDeletedReportersReportsStayWithoutThem() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        let tenantID = try await NotesFixture.tenantID(tenant)
        try await withApp { client in
            let author = try await client.signup("author_d", tenant: tenant)
            let reporter = try await client.signup("reporter_d", tenant: tenant)
            let note = try await client.createNote(author, "reported", lat: 0, lng: 0).id
            #expect(try await client.report(reporter, "note", note).status == .created)
            let deleted = try await client.call(.delete, "/v1/me", json: ["password": reporter.password], token: reporter.accessToken)
            #expect(deleted.status == .noContent)
            let rows = try await TestEnvironment.withOwnerPool {
                try await $0.query("SELECT reporter_id IS NULL, target_id FROM reports WHERE tenant_id = \(tenantID)")
                    .map { try $0.decode((Bool, Int64).self) }
            }
            #expect(rows.count == 1 && rows[0].0 && String(rows[0].1) == note)
        }
    }
}
