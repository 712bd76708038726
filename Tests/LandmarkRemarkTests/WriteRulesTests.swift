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

    /// A place's create keeps and applies the same rules, and answers from its insert: the same
    /// place a read of it returns.
    @Test func aPlacesCreateAppliesKeptRulesAndAnswersWhatAReadReturns() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await ContentFilterTests.setFilter(tenant, words: "scam")
        try await withAppParts { client, parts in
            let id = try await Self.tenantID(tenant)
            let user = try await client.signup("rules_p", tenant: tenant)
            func create(_ name: String) async throws -> APIResponse {
                try await client.call(.post, "/v1/places", json: ["name": name, "lat": -33.86, "lng": 151.21], token: user.accessToken)
            }
            #expect(parts.writeRules.rules(tenantID: id) == nil)
            for name in ["The first place", "The second place"] {
                let created = try await create(name)
                #expect(created.status == .created, "\(created.body)")
                #expect(parts.writeRules.rules(tenantID: id) != nil, "kept after \(name)")
                let place = try created.decode(API.Place.self)
                let read = try await client.call(.get, "/v1/places/\(place.id)", token: user.accessToken)
                #expect(created.jsonValue == read.jsonValue, "the create's answer is the place as read")
                #expect(place.createdBy?.username == "rules_p" && place.noteCount == 0 && place.name == name)
            }
            #expect(try await create("a scam place").code == "content_refused")
            try await ContentFilterTests.setFilter(tenant, words: "scam,swindle")
            #expect(try await create("a swindle place").code == "content_refused")
            try await Self.setting(tenant, "terms_version", "v1")
            try await Self.setting(tenant, "terms_required", "true")
            #expect(try await create("under the terms").code == "terms_not_accepted")
            let count = try await TestEnvironment.ownerScalar("SELECT count(*) FROM places WHERE tenant_id = \(id)", as: Int64.self)
            #expect(count == 2, "nothing refused was saved")
        }
    }

    /// An edit applies the kept rules too, and any change to them counts for the very next edit.
    @Test func anEditAppliesKeptRulesAsACreateDoes() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await ContentFilterTests.setFilter(tenant, words: "scam")
        try await withAppParts { client, parts in
            let id = try await Self.tenantID(tenant)
            let user = try await client.signup("rules_e", tenant: tenant)
            let note = try await Self.create(client, user, "the first words").decode(API.Note.self)
            #expect(parts.writeRules.rules(tenantID: id) != nil)
            func edit(_ body: String) async throws -> APIResponse {
                try await client.call(.patch, "/v1/notes/\(note.id)", json: ["body": body], token: user.accessToken)
            }
            let edited = try await edit("the second words")
            #expect(edited.status == .ok, "\(edited.body)")
            let read = try await client.call(.get, "/v1/notes/\(note.id)", token: user.accessToken)
            #expect(edited.jsonValue == read.jsonValue && edited.headers[.eTag] == read.headers[.eTag])
            #expect(try await edit("a scam").code == "content_refused")
            try await ContentFilterTests.setFilter(tenant, words: "scam,swindle")
            #expect(try await edit("a swindle").code == "content_refused", "a word added counts at once")
            try await Self.setting(tenant, "terms_version", "v1")
            try await Self.setting(tenant, "terms_required", "true")
            #expect(try await edit("under the terms").code == "terms_not_accepted")
            try await Self.setting(tenant, "terms_required", "false")
            let visibility = try await client.call(.patch, "/v1/notes/\(note.id)", json: ["visibility": "private"], token: user.accessToken)
            #expect(visibility.status == .ok)
            let body = try await TestEnvironment.ownerScalar("SELECT body || ' ' || visibility FROM notes WHERE tenant_id = \(id)", as: String.self)
            #expect(body == "the second words private", "nothing refused was saved")
        }
    }
}
