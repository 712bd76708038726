import Foundation
import HTTPTypes
import HummingbirdTesting
@testable import LandmarkRemark
import Testing

/// The login throttle under the attacks measured for issue 17: lock-outs by strangers,
/// other spellings of one account, parallel guesses, and guesses through `/v1/me`.
@Suite(.timeLimit(.minutes(10))) struct LoginThrottleTests {
    /// Through a live socket from 127.0.0.1, trusted as a proxy, so `X-Forwarded-For` names the client.
    static func fromProxy(_ configuration: inout AppConfiguration) { configuration.server.trustedProxies = TrustedProxies(list: "127.0.0.1")! }

    func login(_ client: any TestClientProtocol, _ name: String, _ password: String, tenant: String, from address: String? = nil) async throws -> APIResponse {
        var headers: HTTPFields = [:]
        if let address { headers[HTTPField.Name("X-Forwarded-For")!] = address }
        return try await client.call(.post, "/v1/auth/login", json: ["username": name, "password": password], tenant: tenant, headers: headers)
    }

    @Test func aStrangerCannotLockTheOwnerOutOfLoginPasswordChangeOrDeletion() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withLiveApp(Self.fromProxy) { client, _ in
            let owner = try await client.signup("owner_x", tenant: tenant)
            let home = "198.51.100.7", stranger = "203.0.113.9"
            #expect(try await login(client, "owner_x", owner.password, tenant: tenant, from: home).status == .ok)
            for _ in 0..<5 {
                #expect(try await login(client, "owner_x", "guess guess guess", tenant: tenant, from: stranger).code == "invalid_credentials")
            }
            let blocked = try await login(client, "owner_x", owner.password, tenant: tenant, from: stranger)
            #expect(blocked.code == "rate_limited" && blocked.headers[.retryAfter] != nil)

            // The owner, from home, is not blocked by any of that.
            let again = try await login(client, "owner_x", owner.password, tenant: tenant, from: home)
            #expect(again.status == .ok)
            let token = try again.decode(API.TokenResponse.self).accessToken
            let fromHome: HTTPFields = [HTTPField.Name("X-Forwarded-For")!: home]
            let changed = try await client.call(.patch, "/v1/me", json: ["password": ["current": owner.password, "new": "another sturdy phrase"]],
                                                token: token, headers: fromHome)
            #expect(changed.status == .ok, "\(changed.body)")
            let deleted = try await client.call(.delete, "/v1/me", json: ["password": "another sturdy phrase"], token: token, headers: fromHome)
            #expect(deleted.status == .noContent, "\(deleted.body)")
        }
    }

    @Test func theAccountWideLimitStopsNewAddressesButNotOnesTheOwnerUsed() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withLiveApp({ Self.fromProxy(&$0); $0.accounts.loginFailuresPerAccount = 3 }) { client, _ in
            let owner = try await client.signup("owner_y", tenant: tenant)
            #expect(try await login(client, "owner_y", owner.password, tenant: tenant, from: "198.51.100.8").status == .ok)
            #expect(try await login(client, "owner_y", owner.password, tenant: tenant, from: "2001:db8:5:6::1").status == .ok)
            for address in ["203.0.113.1", "203.0.113.2", "203.0.113.3"] {
                #expect(try await login(client, "owner_y", "spray spray", tenant: tenant, from: address).code == "invalid_credentials")
            }
            // A fourth address has the right password and still waits: the account is under attack.
            #expect(try await login(client, "owner_y", owner.password, tenant: tenant, from: "203.0.113.4").code == "rate_limited")
            // The owner's usual address is let through.
            #expect(try await login(client, "owner_y", owner.password, tenant: tenant, from: "198.51.100.8").status == .ok)
            // IPv6 counts by /64: another address in the owner's /64 is known too, one outside it is not.
            #expect(try await login(client, "owner_y", owner.password, tenant: tenant, from: "2001:db8:5:6:abcd::2").status == .ok)
            #expect(try await login(client, "owner_y", owner.password, tenant: tenant, from: "2001:db8:5:7::1").code == "rate_limited")
        }
    }

    @Test func everySpellingOfAnAccountSharesItsCount() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let account = try await client.signup("alice_c08eb2", email: "alice_c08eb2@example.com", tenant: tenant)
            // PostgreSQL's lower() folds 'İ' to 'i' where Swift's lowercased() does not: the lookup finds her.
            let spellings = ["alİce_c08eb2", "ALİCE_C08EB2", "alice_c08eb2@example.com", "alİce_c08eb2@EXAMPLE.com"]
            for spelling in spellings {
                #expect(try await login(client, spelling, account.password, tenant: tenant).status == .ok, "\(spelling)")
            }
            for _ in 0..<5 { _ = try await login(client, "alice_c08eb2", "wrong wrong wrong", tenant: tenant) }
            for spelling in spellings {
                #expect(try await login(client, spelling, account.password, tenant: tenant).code == "rate_limited", "\(spelling)")
                #expect(try await login(client, spelling, "wrong again", tenant: tenant).code == "rate_limited", "\(spelling)")
            }
        }
    }

    @Test func unknownLoginsCostWhatKnownOnesCostKeyedByWhatTheLookupFolds() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let account = try await client.signup("known_q", tenant: tenant)
            var known: [Int] = [], unknown: [Int] = []
            for _ in 0..<6 {
                known.append(Int(try await login(client, "known_q", "wrong wrong", tenant: tenant).status.code))
                unknown.append(Int(try await login(client, "ghist_q", "wrong wrong", tenant: tenant).status.code))
            }
            #expect(known == [401, 401, 401, 401, 401, 429])
            #expect(unknown == known)
            #expect(try await login(client, "GHİST_Q", "wrong wrong", tenant: tenant).code == "rate_limited")
            _ = account
        }
    }

    @Test func parallelGuessesNeverGetMoreThanTheLimitEvaluated() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp({ $0.database.poolSize = 10; $0.accounts.hashQueueTimeout = .seconds(30) }) { client in
            let account = try await client.signup("target_p", tenant: tenant)
            let started = ContinuousClock.now
            let logins = try await statuses(30) { _ in try await login(client, "target_p", "parallel guess", tenant: tenant) }
            let elapsed = ContinuousClock.now - started
            // Exactly the limit is evaluated; the rest are refused (429), or, on a loaded machine,
            // given back unevaluated when hashing or the pool stays saturated (503). The block the
            // limit sets lasts 15 s, the next 30 s: a burst slower than that (a loaded Citus run's
            // was) rightly has one more guess evaluated for each block that ran out meanwhile.
            let evaluable = elapsed < .seconds(15) ? 5 : elapsed < .seconds(45) ? 6 : 7
            let evaluated = logins[401] ?? 0
            #expect((5...evaluable).contains(evaluated) && (logins[429] ?? 0) >= 1
                    && evaluated + (logins[429] ?? 0) + (logins[503] ?? 0) == 30, "\(logins) in \(elapsed)")

            // PATCH and DELETE /v1/me check the password the same way, under the same count.
            let other = try await client.signup("target_m", tenant: tenant)
            let patches = try await statuses(15) { _ in
                try await client.call(.patch, "/v1/me", json: ["password": ["current": "parallel guess", "new": "a new sturdy phrase"]], token: other.accessToken)
            }
            let deletes = try await statuses(15) { _ in
                try await client.call(.delete, "/v1/me", json: ["password": "parallel guess"], token: other.accessToken)
            }
            #expect((patches[401] ?? 0) + (deletes[401] ?? 0) == 5, "\(patches) \(deletes)")
            #expect((patches[429] ?? 0) + (deletes[429] ?? 0) >= 1, "\(patches) \(deletes)")
            #expect((patches[429] ?? 0) + (deletes[429] ?? 0) + (patches[503] ?? 0) + (deletes[503] ?? 0) == 25, "\(patches) \(deletes)")
            #expect(try await login(client, "target_m", other.password, tenant: tenant).code == "rate_limited")
            _ = account
        }
    }

    @Test func ipv6AddressesCountByTheirSlash64() {
        #expect(LoginThrottle.addressKey("2001:db8:1:2:aaaa:bbbb:cccc:1") == "2001:db8:1:2::/64")
        #expect(LoginThrottle.addressKey("2001:0db8:0001:0002::9") == "2001:db8:1:2::/64")
        #expect(LoginThrottle.addressKey("203.0.113.9") == "203.0.113.9")
        #expect(LoginThrottle.addressKey("unknown") == "unknown")
    }

    /// Runs `count` requests at once and counts their statuses.
    func statuses(_ count: Int, _ request: @escaping @Sendable (Int) async throws -> APIResponse) async throws -> [Int: Int] {
        try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<count { group.addTask { Int(try await request(index).status.code) } }
            return try await group.reduce(into: [Int: Int]()) { $0[$1, default: 0] += 1 }
        }
    }
}
