import HTTPTypes
import HummingbirdTesting
import Postgres
import Testing

/// Cross-origin calls from web pages: allowed per tenant by operators, none by default.
@Suite struct CORSTests {
    static let page = "https://maps.example.com"

    static func allow(_ origins: String, tenant: String) async throws {
        try await TestEnvironment.withOwnerPool {
            try await $0.query("SELECT 1 FROM admin.set_tenant_setting(\(tenant), 'allowed_origins', \(origins))")
        }
    }

    static func from(_ origin: String, _ extra: HTTPFields = [:]) -> HTTPFields {
        var headers = extra
        headers[.origin] = origin
        return headers
    }

    static let preflight: HTTPFields = [
        .accessControlRequestMethod: "POST", .accessControlRequestHeaders: "authorization, content-type, x-tenant",
    ]

    @Test func noOriginIsAllowedUntilAnOperatorSaysSo() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        // Preflights ask every tenant: an origin no other test lists.
        let page = "https://nobody-\(UInt32.random(in: 0...UInt32.max)).example"
        try await withApp { client in
            let account = try await client.signup("homebody", tenant: tenant)
            let read = try await client.call(.get, "/v1/notes", token: account.accessToken, headers: Self.from(page))
            #expect(read.status == .ok)
            #expect(read.headers[.accessControlAllowOrigin] == nil)
            #expect(read.headers[.vary] == "Origin")
            let asked = try await client.call(.options, "/v1/notes", headers: Self.from(page, Self.preflight))
            #expect(asked.code == "origin_not_allowed")
            #expect(asked.headers[.accessControlAllowOrigin] == nil)
            #expect(asked.headers[.accessControlAllowMethods] == nil)
        }
    }

    @Test func anAllowedOriginReadsItsTenantsAnswersAndOnlyThose() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        let other = try await TestEnvironment.makeTenant()
        try await Self.allow("\(Self.page), http://localhost:3000", tenant: tenant)
        try await withApp { client in
            let preflight = try await client.call(.options, "/v1/auth/login", headers: Self.from(Self.page, Self.preflight))
            #expect(preflight.status == .noContent)
            #expect(preflight.headers[.accessControlAllowOrigin] == Self.page)
            #expect(preflight.headers[.accessControlAllowHeaders]?.contains("X-Tenant") == true)
            #expect(preflight.headers[.accessControlAllowMethods]?.contains("PATCH") == true)
            #expect(preflight.headers[.accessControlAllowCredentials] == nil)

            // Unauthenticated, tenant named: the answer (a problem too) is the page's to read.
            let signup = try await client.call(
                .post, "/v1/auth/signup", json: ["username": "visitor", "password": "a sturdy passphrase"], tenant: tenant,
                headers: Self.from(Self.page))
            #expect(signup.status == .created)
            #expect(signup.headers[.accessControlAllowOrigin] == Self.page)
            #expect(signup.headers[.accessControlExposeHeaders]?.contains("ETag") == true)
            let token = try signup.decode(API.TokenResponse.self).accessToken
            let failed = try await client.call(.get, "/v1/notes/12345", token: token, headers: Self.from(Self.page))
            #expect(failed.code == "not_found")
            #expect(failed.headers[.accessControlAllowOrigin] == Self.page)
            // Authenticated without X-Tenant: the token's tenant decides.
            let created = try await client.call(
                .post, "/v1/notes", json: ["body": "from the map page", "lat": 1.0, "lng": 2.0], token: token,
                headers: Self.from("http://localhost:3000"))
            #expect(created.status == .created)
            #expect(created.headers[.accessControlAllowOrigin] == "http://localhost:3000")

            // The same page, another tenant's user or name: nothing to read.
            let stranger = try await client.signup("stranger", tenant: other)
            let theirs = try await client.call(.get, "/v1/notes", token: stranger.accessToken, headers: Self.from(Self.page))
            #expect(theirs.status == .ok)
            #expect(theirs.headers[.accessControlAllowOrigin] == nil)
            let named = try await client.call(
                .post, "/v1/auth/login", json: ["username": "x", "password": "y"], tenant: other, headers: Self.from(Self.page))
            #expect(named.headers[.accessControlAllowOrigin] == nil)
            // A token of the allowing tenant cannot borrow its consent for another one named in X-Tenant.
            let mismatch = try await client.call(.get, "/v1/notes", token: token, tenant: other, headers: Self.from(Self.page))
            #expect(mismatch.code == "tenant_mismatch")
            #expect(mismatch.headers[.accessControlAllowOrigin] == nil)

            // An empty tenant name, or a made-up one, decides nothing for anyone else.
            for name in ["", "no-such-tenant"] {
                let odd = try await client.call(.post, "/v1/auth/guest", headers: Self.from(Self.page, [HTTPField.Name("X-Tenant")!: name]))
                #expect(odd.headers[.accessControlAllowOrigin] == nil)
            }
            let still = try await client.call(.options, "/v1/notes", headers: Self.from(Self.page, Self.preflight))
            #expect(still.status == .noContent)

            // Origins that are not exactly listed.
            for origin in ["https://maps.example.com.evil.net", "http://maps.example.com", "https://maps.example.com:444", "null", "HTTPS://MAPS.EXAMPLE.COM"] {
                let response = try await client.call(.get, "/v1/notes", token: token, headers: Self.from(origin))
                #expect(response.headers[.accessControlAllowOrigin] == nil, "\(origin)")
                let asked = try await client.call(.options, "/v1/notes", headers: Self.from(origin, Self.preflight))
                #expect(asked.code == "origin_not_allowed", "\(origin)")
            }
        }
    }

    @Test func operatorsListOriginsOnlyInTheirPlainForm() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await Self.allow(
            " HTTPS://Maps.Example.com/ ,https://maps.example.com,https://maps.example.com:443,http://127.0.0.1:8080,http://a.example:80",
            tenant: tenant)
        let stored = try await TestEnvironment.ownerScalar("SELECT array_to_string(allowed_origins, ' ') FROM tenants WHERE slug = \(tenant)", as: String.self)
        #expect(stored == "http://127.0.0.1:8080 http://a.example https://maps.example.com")
        for bad in ["*", "https://maps.example.com/app", "javascript:alert(1)", "maps.example.com", "https://user@maps.example.com", "null",
                    "https://maps.example.com?x", "https://" + String(repeating: "a", count: 10) + "%00",
                    "https://a.example https://b.example", "https://maps.example.com:70000", "http://[::1]:3000", "https://x.example:0"] {
            await #expect(throws: PostgresError.self, "\(bad)") { try await Self.allow(bad, tenant: tenant) }
        }
        // Nor behind the operators' function, straight into the table.
        await #expect(throws: PostgresError.self) {
            try await TestEnvironment.withOwnerPool {
                try await $0.query("UPDATE tenants SET allowed_origins = ARRAY['https://a.example https://b.example'] WHERE slug = \(tenant)")
            }
        }
        try await Self.allow("", tenant: tenant)
        #expect(try await TestEnvironment.ownerScalar("SELECT cardinality(allowed_origins) FROM tenants WHERE slug = \(tenant)", as: Int.self) == 0)
    }
}
