import Foundation
import HTTPTypes
import HummingbirdTesting
@testable import LandmarkRemark
import Testing

@Suite(.timeLimit(.minutes(10))) struct AuthSignupTests {
    @Test func signupReturnsTheTokenResponse() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let response = try await client.call(
                .post, "/v1/auth/signup", json: ["username": "Alice.B-1", "password": "correct horse battery", "email": "alice@example.com"],
                tenant: tenant)
            #expect(response.status == .created)
            let tokens = try response.decode(API.TokenResponse.self)
            let user = tokens.user
            #expect(user.username == "Alice.B-1")
            #expect(user.email == "alice@example.com")
            #expect(!user.id.isEmpty && user.id.allSatisfy(\.isNumber))
            // `created_at` decoded as `API.Timestamp`: RFC 3339 in UTC with milliseconds.
            #expect(tokens.tokenType == "Bearer")
            #expect(tokens.expiresIn == 3600)
            let access = tokens.accessToken
            let refresh = tokens.refreshToken
            // Each names its tenant: the access token `lr_at_<tenant id>_`, signed claims and a tag;
            // the refresh token `lr_rt_<tenant id>_` and 43 random characters.
            let tenantID = try await TestEnvironment.ownerScalar("SELECT id FROM tenants WHERE slug = \(tenant)", as: Int64.self)
            #expect(access.hasPrefix("lr_at_\(tenantID)_") && access.utf8.count <= AccessTokenSigner.maximumLength)
            #expect(AccessTokenSigner(keys: [TestEnvironment.testSigningKey]).verify(access)?.username == "Alice.B-1")
            #expect(refresh.hasPrefix("lr_rt_\(tenantID)_") && refresh.count == "lr_rt_\(tenantID)_".count + 43)
            // The server keeps the tokens' SHA-256 only.
            let stored = try await TestEnvironment.ownerScalar(
                "SELECT count(*) FROM session_tokens WHERE token_hash IN (sha256(convert_to(\(access), 'UTF8')), sha256(convert_to(\(refresh), 'UTF8')))",
                as: Int.self)
            #expect(stored == 2)
        }
    }

    @Test func usernamesAreUniqueIgnoringCaseAndShownAsTyped() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            _ = try await client.signup("Mixed_Case", email: "m@example.com", tenant: tenant)
            let clash = try await client.call(.post, "/v1/auth/signup", json: ["username": "mixed_CASE", "password": "another good passphrase"], tenant: tenant)
            #expect(clash.status == .conflict)
            #expect(clash.code == "username_taken")
            let emailClash = try await client.call(
                .post, "/v1/auth/signup", json: ["username": "other", "password": "another good passphrase", "email": "M@EXAMPLE.com"], tenant: tenant)
            #expect(emailClash.status == .conflict)
            #expect(emailClash.code == "email_taken")
        }
    }

    @Test func usernameRules() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            for bad in ["ab", String(repeating: "a", count: 33), "has space", "emoji😀", "semi;colon", "per%cent", "quote'", "ünïcode", ""] {
                let response = try await client.call(.post, "/v1/auth/signup", json: ["username": bad, "password": "a sturdy passphrase"], tenant: tenant)
                #expect(response.status == .unprocessableContent, "\(bad) was accepted")
                #expect(response.errorFields.first == "username")
            }
            for good in ["abc", String(repeating: "z", count: 32), "a.b_c-d", "under_score", "1.2.3"] {
                let response = try await client.call(.post, "/v1/auth/signup", json: ["username": good, "password": "a sturdy passphrase"], tenant: tenant)
                #expect(response.status == .created, "\(good) was refused: \(response.body)")
            }
            let count = try await TestEnvironment.ownerScalar(
                "SELECT count(*) FROM users u JOIN tenants t ON t.id = u.tenant_id WHERE t.slug = \(tenant)", as: Int.self)
            #expect(count == 5)
        }
    }

    @Test func passwordRules() async throws {
        let tenant = try await TestEnvironment.makeTenant(minPasswordLength: 10)
        try await withApp { client in
            func signup(_ username: String, _ password: String) async throws -> APIResponse {
                try await client.call(.post, "/v1/auth/signup", json: ["username": username, "password": password], tenant: tenant)
            }
            // The tenant's minimum, counted in code points.
            #expect(try await signup("short", "nine char").code == "validation_failed")
            #expect(try await signup("tenchars", "ten chars!").status == .created)
            // 128 code points is the most; never truncated.
            let longest = String(repeating: "🔑", count: 128)
            #expect(try await signup("longest", longest).status == .created)
            #expect(try await signup("toolong", longest + "x").code == "validation_failed")
            // Not the username, not a common password.
            #expect(try await signup("samesame12", "SameSame12").code == "validation_failed")
            #expect(try await signup("common", "password123").code == "validation_failed")
            #expect(try await signup("common2", "qwertyuiop").code == "validation_failed")
            // Unicode passwords log in as typed.
            let unicode = "e\u{301}té 密码 🦘 עברית"
            #expect(try await signup("unicode", unicode).status == .created)
            let login = try await client.call(.post, "/v1/auth/login", json: ["username": "unicode", "password": unicode], tenant: tenant)
            #expect(login.status == .ok)
            let precomposed = try await client.call(.post, "/v1/auth/login", json: ["username": "unicode", "password": "\u{e9}té 密码 🦘 עברית"], tenant: tenant)
            #expect(precomposed.status == .unauthorized)
            let long = try await client.call(.post, "/v1/auth/login", json: ["username": "longest", "password": longest], tenant: tenant)
            #expect(long.status == .ok)
        }
    }

    @Test func emailMustBePlausible() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            for bad in ["no-at", "a@b", "@example.com", "a@.com", "a b@example.com", "a@example.com.", String(repeating: "x", count: 250) + "@e.com"] {
                let response = try await client.call(.post, "/v1/auth/signup", json: ["username": "user1", "password": "a sturdy passphrase", "email": bad], tenant: tenant)
                #expect(response.code == "validation_failed", "\(bad) was accepted")
            }
            let nullEmail = try await client.call(.post, "/v1/auth/signup", json: ["username": "user1", "password": "a sturdy passphrase", "email": NSNull()], tenant: tenant)
            #expect(nullEmail.status == .created)
        }
    }
}
