import Foundation
import HTTPTypes
import HummingbirdTesting
@testable import LandmarkRemark
import Testing

/// Moderators (issue 34): the queue of open reports by target, decisions and their effects
/// on every read (streams: SafetyEventsTests), the audit log, the 24-hour clock, and who may do any of it.
@Suite(.timeLimit(.minutes(10))) struct ModerationTests {
    static func makeModerator(_ account: Account) async throws {
        let made = try await TestEnvironment.ownerScalar(
            "SELECT admin.set_moderator(\(account.tenant), \(account.username), true)", as: Bool.self)
        #expect(made)
    }

    static func decide(
        _ client: some TestClientProtocol, _ moderator: Account, _ type: String, _ id: String, _ json: [String: Any]
    ) async throws -> APIResponse {
        try await client.call(.post, "/v1/moderation/targets/\(type)/\(id)/decision", json: json, token: moderator.accessToken)
    }

    static func queue(_ client: some TestClientProtocol, _ moderator: Account, _ query: String = "") async throws -> API.ModerationQueuePage {
        try await client.call(.get, "/v1/moderation/reports" + query, token: moderator.accessToken).decode(API.ModerationQueuePage.self)
    }

    @Test func onlyTheTenantsModeratorsModerate() async throws {
        let (tenant, other) = (try await TestEnvironment.makeTenant(), try await TestEnvironment.makeTenant())
        try await withApp { client in
            let user = try await client.signup("plain_m", tenant: tenant)
            let theirModerator = try await client.signup("mod_elsewhere", tenant: other)
            try await Self.makeModerator(theirModerator)
            let author = try await client.signup("author_m", tenant: tenant)
            let note = try await client.createNote(author, "reported", lat: 0, lng: 0).id
            #expect(try await client.report(user, "note", note).status == .created)
            for account in [user, author] {
                #expect(try await client.call(.get, "/v1/moderation/reports", token: account.accessToken).code == "forbidden")
                #expect(try await client.call(.get, "/v1/moderation/log", token: account.accessToken).code == "forbidden")
                #expect(try await Self.decide(client, account, "note", note, ["action": "remove"]).code == "forbidden")
            }
            // A moderator of another tenant: nothing of this one's, whichever way it asks.
            #expect(try await Self.decide(client, theirModerator, "note", note, ["action": "remove"]).code == "not_found")
            // `GET /v1/me` says who moderates, for the app's menu.
            func moderates(_ account: Account) async throws -> Bool {
                try await client.call(.get, "/v1/me", token: account.accessToken).decode(API.Me.self).moderator
            }
            #expect(try await moderates(theirModerator))
            #expect(try await !moderates(user))
            #expect(try await Self.queue(client, theirModerator).items.isEmpty)
            let crossing = try await client.call(
                .get, "/v1/moderation/reports", token: theirModerator.accessToken, tenant: tenant)
            #expect(crossing.code == "tenant_mismatch")
            #expect(try await client.call(.get, "/v1/notes/\(note)", token: author.accessToken).status == .ok)
            // The role withdrawn: forbidden again.
            _ = try await TestEnvironment.ownerScalar("SELECT admin.set_moderator(\(other), 'MOD_ELSEWHERE', false)", as: Bool.self)
            #expect(try await client.call(.get, "/v1/moderation/reports", token: theirModerator.accessToken).code == "forbidden")
            #expect(try await !moderates(theirModerator))
        }
    }

    @Test func theQueueGroupsOpenReportsByTargetTheLongestWaitingFirst() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let moderator = try await client.signup("mod_q", tenant: tenant)
            try await Self.makeModerator(moderator)
            let author = try await client.signup("author_q", tenant: tenant)
            var reporters: [Account] = []
            for index in 0..<3 { reporters.append(try await client.signup("reporter_q\(index)", tenant: tenant)) }
            let note = try await client.createNote(author, "the reported words", lat: 0, lng: 0).id
            #expect(try await client.report(reporters[0], "note", note, reason: "hate").status == .created)
            #expect(try await client.report(reporters[1], "note", note, reason: "spam").status == .created)
            #expect(try await client.report(reporters[2], "note", note, reason: "spam").status == .created)
            // After the note: reporting the user hides their notes from the reporter.
            #expect(try await client.report(reporters[1], "user", author.userID, reason: "spam").status == .created)
            let response = try await client.call(.get, "/v1/moderation/reports?state=open", token: moderator.accessToken)
            // Reporters are never named.
            #expect(!response.body.contains("reporter_q"))
            let page = try response.decode(API.ModerationQueuePage.self)
            #expect(page.items.map(\.target.type) == ["note", "user"])
            let first = try #require(page.items.first)
            #expect(first.target.id == note && first.content == "the reported words" && first.author?.username == "author_q")
            #expect(first.openReports == 3 && first.reasons == ["spam", "hate"] && first.moderation == "pending")
            let waited = Timestamp.parse(first.dueAt.text)?.timeIntervalSince(Timestamp.parse(first.firstReportedAt.text) ?? .distantPast)
            #expect(abs((waited ?? 0) - 24 * 3600) < 0.001)
            #expect(page.items.last?.content == "author_q")
            let one = try await Self.queue(client, moderator, "?limit=1")
            #expect(one.items.map(\.target.type) == ["note"])
            let rest = try await Self.queue(client, moderator, "?limit=1&cursor=\(try #require(one.nextCursor))")
            #expect(rest.items.map(\.target.type) == ["user"] && rest.nextCursor == nil)
            #expect(try await client.call(.get, "/v1/moderation/reports?state=closed", token: moderator.accessToken).status == .badRequest)
        }
    }

    @Test func dismissingShowsAHeldNoteAgainAndTheLogKeepsEverything() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await ReportsTests.setThreshold(2, tenant: tenant)
        try await withApp { client in
            let moderator = try await client.signup("mod_d", tenant: tenant)
            try await Self.makeModerator(moderator)
            let author = try await client.signup("author_d2", tenant: tenant)
            let (one, two, bystander) = (
                try await client.signup("one_d", tenant: tenant), try await client.signup("two_d", tenant: tenant),
                try await client.signup("bystander_d", tenant: tenant))
            let note = try await client.createNote(author, "misunderstood", lat: -33.86, lng: 151.21).id
            #expect(try await client.report(one, "note", note).status == .created)
            #expect(try await client.report(two, "note", note).status == .created)
            #expect(try await !client.sees(note: note, as: bystander))
            let decided = try await Self.decide(client, moderator, "note", note, ["action": "dismiss", "note": "  satire  "])
            #expect(decided.status == .ok, "\(decided.body)")
            let entry = try decided.decode(API.ModerationLogEntry.self)
            #expect(entry.kind == "decision" && entry.action == "dismiss" && entry.moderator?.username == "mod_d")
            #expect(entry.note == "satire" && entry.content == "misunderstood" && entry.author?.username == "author_d2")
            #expect(try await client.sees(note: note, as: bystander))
            let shown = try await client.call(.get, "/v1/notes/\(note)", token: author.accessToken).decode(API.Note.self)
            #expect(shown.moderation == nil)
            let theirs = try await client.call(.get, "/v1/me/reports", token: one.accessToken).decode(API.ReportPage.self)
            #expect(theirs.items.map(\.state) == ["dismissed"])
            // Still hidden from those who reported it: a report hides for good.
            #expect(try await !client.sees(note: note, as: one))
            #expect(try await Self.queue(client, moderator).items.isEmpty)
            let log = try await client.call(.get, "/v1/moderation/log", token: moderator.accessToken).decode(API.ModerationLogPage.self)
            #expect(log.items.map(\.kind) == ["decision", "report", "report"])
            #expect(log.items.allSatisfy { $0.content == "misunderstood" && $0.target.id == note })
            #expect(log.items.dropFirst().allSatisfy { $0.moderator == nil && $0.reason == "harassment" })
            let operators = try await TestEnvironment.ownerScalar(
                "SELECT count(*)::int8 FROM admin.moderation_log WHERE tenant = \(tenant)", as: Int.self)
            #expect(operators == 3)
        }
    }

    /// A note its author deleted after it was reported stays in the queue (content gone) until a
    /// moderator closes its reports: dismissing or removing does, suspending cannot (the author
    /// went with it). Found by the web app's moderation page: the item could never leave.
    @Test func reportsOfDeletedContentCanBeClosed() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let moderator = try await client.signup("mod_g", tenant: tenant)
            try await Self.makeModerator(moderator)
            let author = try await client.signup("author_g", tenant: tenant)
            let (one, two) = (try await client.signup("one_g", tenant: tenant), try await client.signup("two_g", tenant: tenant))
            let gone = try await client.createNote(author, "said and unsaid", lat: 0, lng: 0).id
            let kept = try await client.createNote(author, "still here", lat: 0, lng: 0).id
            #expect(try await client.report(one, "note", gone).status == .created)
            #expect(try await client.report(two, "note", gone, reason: "spam").status == .created)
            #expect(try await client.report(one, "note", kept).status == .created)
            #expect(try await client.call(.delete, "/v1/notes/\(gone)", token: author.accessToken).status == .noContent)
            let item = try #require(try await Self.queue(client, moderator).items.first { $0.target.id == gone })
            #expect(item.content == nil && item.author == nil && item.openReports == 2)
            #expect(try await Self.decide(client, moderator, "note", gone, ["action": "suspend_author", "until": Timestamp.format(Date().addingTimeInterval(3600))]).code == "not_found")
            let closed = try await Self.decide(client, moderator, "note", gone, ["action": "dismiss", "note": "deleted by its author"])
            #expect(closed.status == .ok, "\(closed.body)")
            let entry = try closed.decode(API.ModerationLogEntry.self)
            #expect(entry.action == "dismiss" && entry.content == nil && entry.author == nil)
            #expect(try await Self.queue(client, moderator).items.map(\.target.id) == [kept])
            let theirs = try await client.call(.get, "/v1/me/reports", token: two.accessToken).decode(API.ReportPage.self)
            #expect(theirs.items.map(\.state) == ["dismissed"])
            // Nothing left to close: not found, as for any id.
            #expect(try await Self.decide(client, moderator, "note", gone, ["action": "remove"]).code == "not_found")
            #expect(try await Self.decide(client, moderator, "note", "987654321", ["action": "dismiss"]).code == "not_found")
        }
    }

    @Test func suspendingSignsTheAuthorOutUntilTheDateAndBanningForGood() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let moderator = try await client.signup("mod_s", tenant: tenant)
            try await Self.makeModerator(moderator)
            let author = try await client.signup("author_s2", tenant: tenant)
            let bystander = try await client.signup("bystander_s", tenant: tenant)
            let reported = try await client.createNote(author, "over the line", lat: -33.86, lng: 151.21).id
            let other = try await client.createNote(author, "harmless", lat: -33.86, lng: 151.21).id
            #expect(try await client.report(bystander, "note", reported).status == .created)
            let soon = Date().addingTimeInterval(3600)
            let refusals: [([String: Any], String)] = [
                (["action": "suspend_author"], "until"),
                (["action": "suspend_author", "until": "2001-01-01T00:00:00Z"], "until"),
                (["action": "suspend_author", "until": "next tuesday"], "until"),
                (["action": "suspend_author", "until": "2999-01-01T00:00:00Z"], "until"),
                (["action": "dismiss", "until": Timestamp.format(soon)], "until"),
                (["action": "expel"], "action"),
                (["action": "remove", "note": String(repeating: "x", count: 1001)], "note"),
            ]
            for (json, field) in refusals {
                let response = try await Self.decide(client, moderator, "note", reported, json)
                #expect(response.code == "validation_failed" && response.errorFields == [field], "\(json): \(response.body)")
            }
            #expect(try await Self.decide(client, moderator, "user", author.userID, ["action": "remove"]).errorFields == ["action"])
            #expect(try await Self.decide(client, moderator, "user", moderator.userID, ["action": "ban_author"]).errorFields == ["action"])
            #expect(try await client.sees(note: other, as: bystander))

            let suspended = try await Self.decide(
                client, moderator, "note", reported, ["action": "suspend_author", "until": Timestamp.format(soon)])
            #expect(suspended.status == .ok, "\(suspended.body)")
            #expect(try suspended.decode(API.ModerationLogEntry.self).until?.text == Timestamp.format(soon))
            #expect(try await client.call(.get, "/v1/me", token: author.accessToken).status == .unauthorized)
            #expect(try await !client.sees(note: other, as: bystander))
            #expect(try await client.call(.get, "/v1/users/author_s2", token: bystander.accessToken).status == .notFound)
            let login = ["username": "author_s2", "password": author.password]
            #expect(try await client.call(.post, "/v1/auth/login", json: login, tenant: tenant).status != .ok)

            // The date passes: the retention timer lifts it, and the other note is back.
            try await TestEnvironment.withOwnerPool {
                try await $0.query("UPDATE users SET suspended_until = now() - interval '1 second' WHERE username = 'author_s2'")
            }
            // Lifted by this call, or by another test's service a moment before (the retention
            // timer lifts every tenant's): either way the account is enabled after it.
            _ = try await TestEnvironment.ownerScalar("SELECT lift_ended_suspensions()::int8", as: Int.self)
            #expect(try await TestEnvironment.ownerScalar(
                """
                SELECT count(*) FROM users WHERE tenant_id = (SELECT id FROM tenants WHERE slug = \(tenant))
                  AND username = 'author_s2' AND disabled_at IS NULL AND suspended_until IS NULL
                """, as: Int.self) == 1)
            #expect(try await client.call(.post, "/v1/auth/login", json: login, tenant: tenant).status == .ok)
            #expect(try await client.sees(note: other, as: bystander))
            // The reported note was removed with the suspension.
            #expect(try await client.call(.get, "/v1/notes/\(reported)", token: bystander.accessToken).status == .notFound)

            // A ban is for good: nothing lifts it.
            #expect(try await Self.decide(client, moderator, "user", author.userID, ["action": "ban_author"]).status == .ok)
            _ = try await TestEnvironment.ownerScalar("SELECT lift_ended_suspensions()::int8", as: Int.self)
            #expect(try await client.call(.post, "/v1/auth/login", json: login, tenant: tenant).status != .ok)
            #expect(try await !client.sees(note: other, as: bystander))
        }
    }

    /// The 24-hour clock: `/metrics` per tenant, and what is overdue for operators.
    @Test func theClockIsOnMetricsAndOverdueReportsAreListed() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let moderator = try await client.signup("mod_c", tenant: tenant)
            try await Self.makeModerator(moderator)
            let author = try await client.signup("author_c2", tenant: tenant)
            let reporter = try await client.signup("reporter_c2", tenant: tenant)
            let note = try await client.createNote(author, "old news", lat: 0, lng: 0).id
            #expect(try await client.report(reporter, "note", note).status == .created)
            try await TestEnvironment.withOwnerPool {
                try await $0.query("UPDATE reports SET created_at = now() - interval '25 hours' WHERE target_id = \(Int64(note)!)")
            }
            func metric(_ name: String) async throws -> Double? {
                let text = try await client.call(.get, "/metrics").body
                let line = text.split(separator: "\n").first { $0.hasPrefix("\(name){tenant=\"\(tenant)\"}") }
                return line.flatMap { $0.split(separator: " ").last }.flatMap { Double($0) }
            }
            #expect(try await metric("lr_moderation_open_reports") == 1)
            #expect(try await (metric("lr_moderation_oldest_open_report_seconds") ?? 0) > 25 * 3600 - 60)
            let overdue = try await TestEnvironment.ownerScalar(
                "SELECT count(*)::int8 FROM admin.moderation_overdue() WHERE tenant = \(tenant) AND target_id = \(Int64(note)!)", as: Int.self)
            #expect(overdue == 1)
            #expect(try await Self.decide(client, moderator, "note", note, ["action": "dismiss"]).status == .ok)
            #expect(try await metric("lr_moderation_open_reports") == 0)
        }
    }
}
