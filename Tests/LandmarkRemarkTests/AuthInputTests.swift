import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

/// Bad input: each gets its documented status and code, and nothing is written.
@Suite(.timeLimit(.minutes(10))) struct AuthInputTests {
    static func userCount(_ tenant: String) async throws -> Int {
        try await TestEnvironment.ownerScalar(
            "SELECT count(*) FROM users u JOIN tenants t ON t.id = u.tenant_id WHERE t.slug = \(tenant)", as: Int.self)
    }

    @Test func malformedBodiesAreRefusedAndWriteNothing() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let cases: [(String?, HTTPFields, HTTPResponse.Status, String)] = [
                ("not json", [:], .badRequest, "malformed_request"),
                ("[1,2]", [:], .badRequest, "malformed_request"),
                ("", [:], .badRequest, "malformed_request"),
                ("{\"username\": \"abc\", \"password\": \"a sturdy passphrase\"", [:], .badRequest, "malformed_request"),
                ("{\"username\": \"abc\", \"password\": \"a sturdy passphrase\"}", [.contentType: "text/plain"], .unsupportedMediaType, "unsupported_media_type"),
                ("{\"username\": \"abc\", \"password\": \"a sturdy passphrase\"}", [.contentType: "application/x-www-form-urlencoded"], .unsupportedMediaType, "unsupported_media_type"),
                ("{}", [:], .unprocessableContent, "validation_failed"),
                ("{\"username\": null, \"password\": \"a sturdy passphrase\"}", [:], .unprocessableContent, "validation_failed"),
                ("{\"username\": 42, \"password\": \"a sturdy passphrase\"}", [:], .unprocessableContent, "validation_failed"),
                ("{\"username\": \"abc\", \"password\": [\"x\"]}", [:], .unprocessableContent, "validation_failed"),
                ("{\"username\": \"abc\", \"password\": \"a sturdy passphrase\", \"admin\": true}", [:], .unprocessableContent, "validation_failed"),
                ("{\"username\": \"' OR 1=1; --\", \"password\": \"a sturdy passphrase\"}", [:], .unprocessableContent, "validation_failed"),
                ("{\"username\": \"%_\\\\\", \"password\": \"a sturdy passphrase\"}", [:], .unprocessableContent, "validation_failed"),
                ("{\"username\": \"\(String(repeating: "a", count: 10_000))\", \"password\": \"a sturdy passphrase\"}", [:], .unprocessableContent, "validation_failed"),
            ]
            for (body, headers, status, code) in cases {
                let response = try await client.call(.post, "/v1/auth/signup", raw: body, tenant: tenant, headers: headers)
                #expect(response.status == status, "\(body?.prefix(60) ?? "") gave \(response.status)")
                #expect(response.code == code, "\(body?.prefix(60) ?? "") gave \(response.body)")
                #expect(response.headers[.contentType] == "application/problem+json")
            }
            let unknownField = try await client.call(
                .post, "/v1/auth/signup", json: ["username": "abc", "password": "a sturdy passphrase", "admin": true], tenant: tenant)
            let fields = unknownField.errorFields
            #expect(fields == ["admin"])
            #expect(try await Self.userCount(tenant) == 0)
        }
    }

    @Test func oversizedBodiesGet413() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let huge = "{\"username\": \"abc\", \"password\": \"\(String(repeating: "p", count: 70_000))\"}"
            let response = try await client.call(.post, "/v1/auth/signup", raw: huge, tenant: tenant)
            #expect(response.status == .contentTooLarge)
            #expect(response.code == "payload_too_large")
            #expect(try await Self.userCount(tenant) == 0)
        }
    }

    @Test func tenantHeaderIsRequiredAndMustNameAnActiveTenant() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let body: [String: Any] = ["username": "abc", "password": "a sturdy passphrase"]
            #expect(try await client.call(.post, "/v1/auth/signup", json: body).code == "malformed_request")
            #expect(try await client.call(.post, "/v1/auth/signup", json: body, tenant: "no-such-tenant").code == "tenant_not_found")
            #expect(try await client.call(.post, "/v1/auth/signup", json: body, tenant: "'; DROP TABLE tenants; --").code == "tenant_not_found")
            try await TestEnvironment.withOwnerPool { try await $0.query("SELECT admin.set_tenant_disabled(\(tenant), true)") }
            #expect(try await client.call(.post, "/v1/auth/signup", json: body, tenant: tenant).code == "tenant_not_found")
        }
    }

    @Test func tokensMustBeWellFormedAndKnown() async throws {
        try await withApp { client in
            for token in ["", "garbage", "lr_rt_notanaccesstoken", "lr_at_" + String(repeating: "A", count: 43), "lr_at_' OR '1'='1"] {
                let response = try await client.call(.get, "/v1/me", token: token)
                #expect(response.status == .unauthorized)
                #expect(response.code == "unauthenticated")
            }
            #expect(try await client.call(.get, "/v1/me").code == "unauthenticated")
            let basic = try await client.call(.get, "/v1/me", headers: [.authorization: "Basic YWxpY2U6cGFzcw=="])
            #expect(basic.code == "unauthenticated")
        }
    }

    /// Found by fuzzing: a NUL in a text field was cut short by libpq and surfaced as a 500.
    @Test func nulCharactersAreAValidationErrorAndLengthsCountCharacters() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let login = try await client.call(.post, "/v1/auth/login", json: ["username": "a\u{0}b", "password": "x"], tenant: tenant)
            #expect(login.status == .unprocessableContent)
            #expect(login.errorFields.first == "username")
            let signup = try await client.call(.post, "/v1/auth/signup", json: ["username": "nul", "password": "pass\u{0}word long"], tenant: tenant)
            #expect(signup.code == "validation_failed")
            // 200 two-byte characters are 200 characters, within the 254 allowed.
            let long = try await client.call(.post, "/v1/auth/login", json: ["username": String(repeating: "é", count: 200), "password": "x"], tenant: tenant)
            #expect(long.code == "invalid_credentials")
            #expect(long.headers[.wwwAuthenticate]?.hasPrefix("Bearer") == true)
        }
    }
}
