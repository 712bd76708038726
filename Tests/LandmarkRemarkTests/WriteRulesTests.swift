import Foundation
import HTTPTypes
import HummingbirdTesting
@testable import LandmarkRemark
import Postgres
import Testing

/// A note's create in one round trip (issue 38): the tenant's word list kept from an earlier
/// create, applied only while the tenant's row is at the version it was read at; the terms
/// and the email rule checked by the insert itself. Every change an operator makes with psql
/// counts for the very next create, on every replica, with no wait.
@Suite(.timeLimit(.minutes(10))) struct WriteRulesTests {
    static func tenantID(_ slug: String) async throws -> Int64 {
        try await TestEnvironment.ownerScalar("SELECT id FROM tenants WHERE slug = \(slug)", as: Int64.self)
    }

    static func create(_ client: some TestClientProtocol, _ user: Account, _ body: String, key: String? = nil) async throws -> APIResponse {
        var headers = HTTPFields()
        if let key { headers[HTTPField.Name("Idempotency-Key")!] = key }
        return try await client.call(.post, "/v1/notes", json: ["body": body, "lat": 1, "lng": 2], token: user.accessToken, headers: headers)
    }

    static func setting(_ tenant: String, _ name: String, _ value: String) async throws {
        try await TestEnvironment.withOwnerPool { try await $0.query("SELECT 1 FROM admin.set_tenant_setting(\(tenant), \(name), \(value))") }
    }

    @Test func aChangedWordListCountsForTheNextCreate() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await ContentFilterTests.setFilter(tenant, words: "scam")
        try await withAppParts { client, parts in
            let id = try await Self.tenantID(tenant)
            let user = try await client.signup("rules_w", tenant: tenant)
            #expect(parts.writeRules.rules(tenantID: id) == nil)
            #expect(try await Self.create(client, user, "a first note").status == .created)
            let kept = try #require(parts.writeRules.rules(tenantID: id), "the first create keeps the word list")
            #expect(try await Self.create(client, user, "a second note").status == .created)
            #expect(try await Self.create(client, user, "a scam").code == "content_refused")
            #expect(parts.writeRules.rules(tenantID: id)?.version == kept.version, "unchanged: kept")

            // A new word: the next create's insert finds the row changed, reads the list, refuses.
            try await ContentFilterTests.setFilter(tenant, words: "scam,swindle")
            #expect(try await Self.create(client, user, "a swindle").code == "content_refused")
            #expect(parts.writeRules.rules(tenantID: id)?.version != kept.version)
            // A word taken off the list: a refusal by kept rules is not final.
            try await ContentFilterTests.setFilter(tenant, words: "swindle")
            #expect(try await Self.create(client, user, "no scam after all").status == .created)
            // Held instead of refused.
            try await ContentFilterTests.setFilter(tenant, words: "swindle", action: "hold")
            let held = try await Self.create(client, user, "a swindle, held")
            #expect(held.status == .created)
            #expect(try held.decode(API.Note.self).moderation == "pending")
            let count = try await TestEnvironment.ownerScalar("SELECT count(*) FROM notes WHERE tenant_id = \(id)", as: Int64.self)
            #expect(count == 4, "nothing refused was saved")
        }
    }

    @Test func termsAndEmailRulesCountForTheNextCreate() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withAppParts { client, parts in
            let id = try await Self.tenantID(tenant)
            let user = try await client.signup("rules_t", tenant: tenant)
            #expect(try await Self.create(client, user, "before the terms").status == .created)
            #expect(parts.writeRules.rules(tenantID: id) != nil)
            try await Self.setting(tenant, "terms_version", "v1")
            try await Self.setting(tenant, "terms_required", "true")
            #expect(try await Self.create(client, user, "under the terms").code == "terms_not_accepted")
            let accepted = try await client.call(.post, "/v1/me/terms", json: ["version": "v1"], token: user.accessToken)
            #expect(accepted.status == .ok, "\(accepted.body)")
            #expect(try await Self.create(client, user, "terms accepted").status == .created)
            // A new version of the terms refuses again at once, as does the email rule.
            #expect(try await Self.create(client, user, "kept again").status == .created)
            try await Self.setting(tenant, "terms_version", "v2")
            #expect(try await Self.create(client, user, "a new version").code == "terms_not_accepted")
            try await Self.setting(tenant, "terms_required", "false")
            #expect(try await Self.create(client, user, "no terms").status == .created)
            try await Self.setting(tenant, "email_verification_required", "true")
            #expect(try await Self.create(client, user, "no email").code == "email_not_verified")
            let count = try await TestEnvironment.ownerScalar("SELECT count(*) FROM notes WHERE tenant_id = \(id)", as: Int64.self)
            #expect(count == 4)
        }
    }

    @Test func anIdempotentCreateUnderOutOfDateRulesMakesOneNote() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withAppParts { client, parts in
            let id = try await Self.tenantID(tenant)
            let user = try await client.signup("rules_i", tenant: tenant)
            #expect(try await Self.create(client, user, "keeps the rules").status == .created)
            #expect(parts.writeRules.rules(tenantID: id) != nil)
            try await ContentFilterTests.setFilter(tenant, words: "nothing here")
            let first = try await Self.create(client, user, "with a key", key: "rules-key-1")
            #expect(first.status == .created, "\(first.body)")
            let again = try await Self.create(client, user, "with a key", key: "rules-key-1")
            #expect(again.status == .created && again.body == first.body)
            let count = try await TestEnvironment.ownerScalar(
                "SELECT count(*) FROM notes WHERE tenant_id = \(id) AND body = 'with a key'", as: Int64.self)
            #expect(count == 1)
        }
    }
}
