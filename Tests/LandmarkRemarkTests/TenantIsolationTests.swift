import Foundation
import HTTPTypes
import HummingbirdTesting
@testable import LandmarkRemark
import Postgres
import Testing

@Suite(.timeLimit(.minutes(10))) struct TenantIsolationTests {
    @Test func sameUsernameInTwoTenantsIsTwoAccounts() async throws {
        let a = try await TestEnvironment.makeTenant()
        let b = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let inA = try await client.signup("kim", password: "passphrase for a", tenant: a)
            let inB = try await client.signup("kim", password: "passphrase for b", tenant: b)
            #expect(inA.userID != inB.userID)
            #expect(try await client.call(.post, "/v1/auth/login", json: ["username": "kim", "password": "passphrase for a"], tenant: b).status == .unauthorized)
            // A token of A used with X-Tenant: B.
            let mismatch = try await client.call(.get, "/v1/me", token: inA.accessToken, tenant: b)
            #expect(mismatch.status == .forbidden)
            #expect(mismatch.code == "tenant_mismatch")
            #expect(try await client.call(.get, "/v1/me", token: inA.accessToken, tenant: a).status == .ok)
            // A refresh token of A is unknown in B.
            #expect(try await client.call(.post, "/v1/auth/refresh", json: ["refresh_token": inA.refreshToken], tenant: b).code == "refresh_token_invalid")
            // Users of B are invisible to A.
            _ = try await client.signup("only-in-b", tenant: b)
            let hidden = try await client.call(.get, "/v1/users/only-in-b", token: inA.accessToken)
            #expect(hidden.status == .notFound)
            #expect(hidden.code == "not_found")
            let visible = try await client.call(.get, "/v1/users/KIM", token: inA.accessToken)
            let profile = try visible.decode(API.PublicProfile.self)
            #expect(profile.id == inA.userID)
            #expect(profile.noteCount == 0)
            #expect(!visible.jsonValue.keys.contains("email"), "another user's email is never shown")
        }
    }

    /// Row-level security holds at the SQL level, whatever the service's queries say.
    @Test func rowLevelSecurityHidesOtherTenantsFromTheApplicationRole() async throws {
        let a = try await TestEnvironment.makeTenant()
        let b = try await TestEnvironment.makeTenant()
        try await withApp { client in
            _ = try await client.signup("rls-a", tenant: a)
            _ = try await client.signup("rls-b", tenant: b)
        }
        let (idA, idB) = try await TestEnvironment.withOwnerPool { pool in
            let rows = try await pool.query("SELECT (SELECT id FROM tenants WHERE slug = \(a)), (SELECT id FROM tenants WHERE slug = \(b))")
            return try rows[0].decode((Int64, Int64).self)
        }
        let app = try PostgresPool(configuration: .init(conninfo: try TestEnvironment.variable("LR_TEST_DATABASE_URL"), maxConnections: 1))
        do {
            // No tenant set: nothing at all.
            let unset = try await app.query("SELECT count(*) FROM users")
            #expect(try unset[0].decode(Int.self, column: 0) == 0)
            let sessions = try await app.query("SELECT count(*) FROM sessions")
            #expect(try sessions[0].decode(Int.self, column: 0) == 0)
            try await app.withTransaction(settings: [("app.tenant_id", String(idA))]) { connection in
                let names = try await connection.query("SELECT username FROM users").map { try $0.decode(String.self, column: 0) }
                #expect(names == ["rls-a"])
                // B's rows cannot be changed or added from A.
                let updated = try await connection.query("UPDATE users SET email = 'x@example.com' WHERE tenant_id = \(idB)")
                #expect(updated.affectedRows == 0)
            }
            let insert = await #expect(throws: PostgresError.self) {
                try await app.withTransaction(settings: [("app.tenant_id", String(idA))]) { connection in
                    try await connection.query("INSERT INTO users (tenant_id, username, password_hash) VALUES (\(idB), 'intruder', 'x')")
                }
            }
            #expect(insert?.sqlState == "42501")
            // The application role cannot switch row-level security off.
            let bypass = await #expect(throws: PostgresError.self) { try await app.query("ALTER TABLE users DISABLE ROW LEVEL SECURITY") }
            #expect(bypass?.sqlState == "42501")
        } catch {
            await app.close()
            throw error
        }
        await app.close()
    }

    /// An operator's change with psql reaches the replica by its token cache's next poll (the
    /// revocation feed: within a second), which the test waits for; a login asks the database
    /// and is refused at once.
    @Test func disabledUsersAndTenantsLoseAccess() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withAppParts { client, parts in
            let account = try await client.signup("leo", tenant: tenant)
            try await TestEnvironment.withOwnerPool { try await $0.query("SELECT admin.set_user_disabled(\(tenant), 'LEO', true)") }
            await parts.tokenCache.nextPoll()
            #expect(try await client.call(.get, "/v1/me", token: account.accessToken).status == .unauthorized)
            #expect(try await client.call(.post, "/v1/auth/login", json: ["username": "leo", "password": account.password], tenant: tenant).status == .unauthorized)
            try await TestEnvironment.withOwnerPool { try await $0.query("SELECT admin.set_user_disabled(\(tenant), 'leo', false)") }
            let again = try await client.call(.post, "/v1/auth/login", json: ["username": "leo", "password": account.password], tenant: tenant)
            #expect(again.status == .ok)
            try await TestEnvironment.withOwnerPool { try await $0.query("SELECT admin.set_tenant_disabled(\(tenant), true)") }
            await parts.tokenCache.nextPoll()
            let token = try again.decode(API.TokenResponse.self).accessToken
            #expect(try await client.call(.get, "/v1/me", token: token).status == .unauthorized)
        }
    }
}

@Suite(.timeLimit(.minutes(10))) struct BruteForceTests {
    func attempt(_ client: any TestClientProtocol, _ password: String, tenant: String, from address: String? = nil) async throws -> APIResponse {
        try await client.call(.post, "/v1/auth/login", json: ["username": "mallory", "password": password], tenant: tenant)
    }

    @Test func failuresPastTheThresholdGet429WithRetryAfter() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let account = try await client.signup("mallory", tenant: tenant)
            for _ in 0..<5 {
                #expect(try await attempt(client, "guess guess guess", tenant: tenant).code == "invalid_credentials")
            }
            let blocked = try await attempt(client, account.password, tenant: tenant)
            #expect(blocked.status == .tooManyRequests)
            #expect(blocked.code == "rate_limited")
            let retryAfter = try #require(blocked.headers[.retryAfter].flatMap(Int.init))
            #expect((1...15).contains(retryAfter))
            // Another failure after the block lifts doubles it.
            try await TestEnvironment.withOwnerPool {
                try await $0.query("""
                    UPDATE login_failures SET blocked_until = now()
                    WHERE tenant_id = (SELECT id FROM tenants WHERE slug = \(tenant)) AND key LIKE 'pair:%'
                    """)
            }
            #expect(try await attempt(client, "guess again", tenant: tenant).code == "invalid_credentials")
            let longer = try await attempt(client, account.password, tenant: tenant)
            #expect(longer.headers[.retryAfter].flatMap(Int.init).map { $0 > 15 } == true)
        }
    }

    @Test func aSuccessResetsTheUsernameCount() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let account = try await client.signup("mallory", tenant: tenant)
            for _ in 0..<4 { _ = try await attempt(client, "wrong wrong", tenant: tenant) }
            #expect(try await attempt(client, account.password, tenant: tenant).status == .ok)
            for _ in 0..<4 { #expect(try await attempt(client, "wrong wrong", tenant: tenant).code == "invalid_credentials") }
            #expect(try await attempt(client, account.password, tenant: tenant).status == .ok)
        }
    }

    @Test func perAddressLimitCoversManyUsernames() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp({ $0.accounts.loginFailuresPerAddress = 3 }) { client in
            for name in ["u1", "u2", "u3"] {
                _ = try await client.call(.post, "/v1/auth/login", json: ["username": name, "password": "spray spray"], tenant: tenant)
            }
            let blocked = try await client.call(.post, "/v1/auth/login", json: ["username": "u4", "password": "spray spray"], tenant: tenant)
            #expect(blocked.code == "rate_limited")
        }
    }

    @Test func forwardedForIsBelievedOnlyFromTrustedProxies() throws {
        let proxies = try #require(TrustedProxies(list: "127.0.0.2, 10.0.0.0/8"))
        #expect(proxies.clientAddress(peer: "127.0.0.2", forwardedFor: "203.0.113.9") == "203.0.113.9")
        #expect(proxies.clientAddress(peer: "127.0.0.2", forwardedFor: "198.51.100.1, 203.0.113.9, 10.1.1.1") == "203.0.113.9")
        #expect(proxies.clientAddress(peer: "127.0.0.1", forwardedFor: "203.0.113.9") == "127.0.0.1")
        #expect(proxies.clientAddress(peer: "127.0.0.2", forwardedFor: "not an address") == "127.0.0.2")
        #expect(proxies.clientAddress(peer: "127.0.0.2", forwardedFor: nil) == "127.0.0.2")
        #expect(TrustedProxies(list: "10.0.0.0/33") == nil)
        #expect(TrustedProxies(list: "::1/128")?.contains("::1") == true)
    }
}
