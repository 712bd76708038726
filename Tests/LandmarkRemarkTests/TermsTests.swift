import Foundation
import HummingbirdTesting
import LandmarkRemark
import Testing

/// Terms and contact (issue 34): `GET /v1/tenant` without a sign-in, `POST /v1/me/terms`,
/// and writing refused until the current terms are accepted where the tenant requires it.
@Suite(.timeLimit(.minutes(10))) struct TermsTests {
    static func set(_ tenant: String, _ settings: [(String, String)]) async throws {
        try await TestEnvironment.withOwnerPool { pool in
            for (setting, value) in settings {
                try await pool.query("SELECT 1 FROM admin.set_tenant_setting(\(tenant), \(setting), \(value))")
            }
        }
    }

    @Test func theTenantsFactsArePublic() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await Self.set(tenant, [
            ("terms_url", "https://example.com/terms"), ("terms_version", " 2026-11 "), ("contact_email", "help@example.com"),
            ("guests_enabled", "false"),
        ])
        try await withApp { client in
            let info = try await client.call(.get, "/v1/tenant", tenant: tenant).decode(API.TenantInfo.self)
            #expect(info.slug == tenant && info.termsUrl == "https://example.com/terms" && info.termsVersion == "2026-11")
            #expect(info.contactEmail == "help@example.com" && info.contactUrl == nil && !info.termsRequired)
            #expect(!info.guestsEnabled && info.signInProviders.isEmpty && info.minPasswordLength == 8)
            #expect(try await client.call(.get, "/v1/tenant").code == "malformed_request")
            #expect(try await client.call(.get, "/v1/tenant", tenant: "no-such-tenant").code == "tenant_not_found")
            #expect(try await client.call(.get, "/v1/tenant", tenant: "'; DROP TABLE tenants; --").code == "tenant_not_found")
        }
        // Bad values are the operator's error, and change nothing.
        await #expect(throws: (any Error).self) { try await Self.set(tenant, [("terms_url", "javascript:alert(1)")]) }
        await #expect(throws: (any Error).self) { try await Self.set(tenant, [("terms_version", ""), ("terms_required", "true")]) }
    }

    @Test func writingWaitsForTheCurrentTermsWhereRequired() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let user = try await client.signup("reader_t", tenant: tenant)
            let early = try await client.createNote(user, "before terms existed", lat: 0, lng: 0).id
            try await Self.set(tenant, [("terms_version", "v1"), ("terms_required", "true")])
            func write() async throws -> APIResponse {
                try await client.call(.post, "/v1/notes", json: ["body": "hello", "lat": 0, "lng": 0], token: user.accessToken)
            }
            #expect(try await write().code == "terms_not_accepted")
            #expect(try await client.call(.patch, "/v1/notes/\(early)", json: ["body": "x"], token: user.accessToken).code == "terms_not_accepted")
            #expect(try await client.call(.post, "/v1/places", json: ["name": "Spot", "lat": 0, "lng": 0], token: user.accessToken).code == "terms_not_accepted")
            // Reading needs no acceptance.
            #expect(try await client.call(.get, "/v1/notes/\(early)", token: user.accessToken).status == .ok)
            let stale = try await client.call(.post, "/v1/me/terms", json: ["version": "v0"], token: user.accessToken)
            #expect(stale.code == "validation_failed" && stale.errorFields == ["version"])
            #expect(try await client.call(.post, "/v1/me/terms", json: ["version": 1], token: user.accessToken).errorFields == ["version"])
            let accepted = try await client.call(.post, "/v1/me/terms", json: ["version": "v1"], token: user.accessToken)
            #expect(try accepted.decode(API.Me.self).termsVersion == "v1")
            #expect(try await write().status == .created)
            // A new version: everyone accepts again.
            try await Self.set(tenant, [("terms_version", "v2")])
            #expect(try await write().code == "terms_not_accepted")
            #expect(try await client.call(.get, "/v1/me", token: user.accessToken).decode(API.Me.self).termsVersion == "v1")
            #expect(try await client.call(.post, "/v1/me/terms", json: ["version": "v2"], token: user.accessToken).status == .ok)
            #expect(try await write().status == .created)
            // Not required: anyone writes.
            try await Self.set(tenant, [("terms_required", "false"), ("terms_version", "v3")])
            #expect(try await write().status == .created)
        }
    }
}
