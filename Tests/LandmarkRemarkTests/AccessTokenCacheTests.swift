import Credentials
import Foundation
import HTTPTypes
import HummingbirdTesting
@testable import LandmarkRemark
import Synchronization
import Postgres
import Testing

/// The access tokens a replica keeps (issue 38): what it keeps, when it stops using it, and
/// that a revocation on one replica is refused by another after that one's next poll.
@Suite(.timeLimit(.minutes(10))) struct AccessTokenCacheTests {
    /// A clock the test moves by hand.
    final class ManualClock: Sendable {
        private let instant = Mutex(ContinuousClock.now)
        var now: ContinuousClock.Instant { instant.withLock { $0 } }
        func advance(_ by: Duration) { instant.withLock { $0 += by } }
    }

    static func identity(tenantID: Int64 = 7, slug: String = "seven", hash: [UInt8] = [1, 2, 3]) -> Identity {
        Identity(tenantID: tenantID, tenantSlug: slug, userID: 70, username: "seventy", sessionID: 700, accessTokenHash: hash)
    }

    static func cache(_ clock: ManualClock, capacity: Int = 100) -> AccessTokenCache {
        AccessTokenCache(settings: .init(capacity: capacity, pollInterval: .milliseconds(200), maxAge: .milliseconds(750)), now: { clock.now })
    }

    // MARK: - The cache alone, on a clock moved by hand

    @Test func aKeptTokenIsUsedOnlyWhileConfirmedRecently() {
        let clock = ManualClock()
        let cache = Self.cache(clock)
        let kept = Self.identity()
        cache.keep(kept, epoch: 4, secondsLeft: 3600, checked: clock.now)
        #expect(cache.identity(accessTokenHash: kept.accessTokenHash)?.sessionID == 700)
        clock.advance(.milliseconds(700))
        #expect(cache.identity(accessTokenHash: kept.accessTokenHash) != nil)
        // The feed stalled: past the age, the replica asks the database again (fails closed).
        clock.advance(.milliseconds(100))
        #expect(cache.identity(accessTokenHash: kept.accessTokenHash) == nil)
        // A poll that answers, with the epoch unchanged, confirms it as of the poll's start.
        let started = clock.now
        clock.advance(.milliseconds(30))
        cache.observe([7: .init(epoch: 4, slug: "seven", disabled: false)], asked: [7], started: started)
        #expect(cache.identity(accessTokenHash: kept.accessTokenHash) != nil)
        clock.advance(.milliseconds(730))
        #expect(cache.identity(accessTokenHash: kept.accessTokenHash) == nil, "aged from the poll's start, not its end")
        // A poll that fails confirms nothing (the poller calls observe only when one answers).
        #expect(cache.identity(accessTokenHash: kept.accessTokenHash) == nil)
    }

    @Test func aPollDropsWhatARevocationOfItsUserOrSessionPassed() {
        let clock = ManualClock()
        let cache = Self.cache(clock)
        let (a, b, c, d) = (
            Self.identity(hash: [1]), Self.identity(hash: [2]), Self.identity(tenantID: 8, slug: "eight", hash: [3]),
            Self.identity(tenantID: 9, slug: "nine", hash: [4])
        )
        let neighbour = Identity(tenantID: 7, tenantSlug: "seven", userID: 71, username: "seventy-one", sessionID: 710, accessTokenHash: [5])
        cache.keep(a, epoch: 4, secondsLeft: 60, checked: clock.now)
        // Looked up after a revocation this poll has not seen yet: newer than the poll, kept.
        cache.keep(b, epoch: 6, secondsLeft: 60, checked: clock.now)
        cache.keep(c, epoch: 0, secondsLeft: 60, checked: clock.now)
        cache.keep(d, epoch: 0, secondsLeft: 60, checked: clock.now)
        cache.keep(neighbour, epoch: 4, secondsLeft: 60, checked: clock.now)
        #expect(Set(cache.tenantsFollowed().map(\.tenantID)) == [7, 8, 9])
        #expect(cache.tenantsFollowed().allSatisfy { $0.epoch == nil }, "no revocation read yet")
        cache.observe(
            [7: .init(epoch: 5, slug: "seven", disabled: false), 8: .init(epoch: 0, slug: "eight", disabled: true)],
            revocations: [7: [.init(epoch: 5, userID: nil, sessionID: 700)]],
            asked: [7, 8, 9], started: clock.now)
        #expect(cache.identity(accessTokenHash: [1]) == nil, "its session's revocation at 5 passed the 4 it was kept with")
        #expect(cache.identity(accessTokenHash: [2]) != nil)
        #expect(cache.identity(accessTokenHash: [5]) != nil, "another user's revocation leaves it alone")
        #expect(cache.identity(accessTokenHash: [3]) == nil, "its tenant is disabled")
        #expect(cache.identity(accessTokenHash: [4]) == nil, "its tenant is gone")
        #expect(cache.tenantsFollowed().first { $0.tenantID == 7 }?.epoch == 5)
        // The user's: every session of theirs kept with a lower epoch.
        cache.observe(
            [7: .init(epoch: 7, slug: "seven", disabled: false)], revocations: [7: [.init(epoch: 7, userID: 70, sessionID: nil)]],
            asked: [7], started: clock.now)
        #expect(cache.keptIdentity(accessTokenHash: [2]) == nil)
        #expect(cache.identity(accessTokenHash: [5]) != nil)
        // A tenant renamed: the kept slug would answer X-Tenant wrongly.
        cache.observe([7: .init(epoch: 7, slug: "seven-renamed", disabled: false)], asked: [7], started: clock.now)
        #expect(cache.keptIdentity(accessTokenHash: [5]) == nil)
    }

    static func claims(epoch: Int64 = 4, expires: Int64 = 2_000_000_000, userID: Int64 = 70, sessionID: Int64 = 700) -> AccessTokenSigner.Claims {
        .init(tenantID: 7, userID: userID, sessionID: sessionID, expires: expires, epoch: epoch, username: "seventy")
    }

    @Test func aSignedTokenIsTrustedOnlyWhileItsTenantIsConfirmedAndNothingRevokedItsSession() {
        let clock = ManualClock()
        let unix = Mutex<Int64>(1_900_000_000)
        let cache = AccessTokenCache(
            settings: .init(capacity: 100, pollInterval: .milliseconds(200), maxAge: .milliseconds(750)), now: { clock.now },
            unixTime: { unix.withLock { $0 } })
        let hash: [UInt8] = [9]
        #expect(cache.identity(signed: Self.claims(), accessTokenHash: hash) == nil, "a tenant not followed yet: the database")
        #expect(cache.tenantsFollowed().map(\.tenantID) == [7], "and followed from now on")
        cache.observe([7: .init(epoch: 6, slug: "seven", disabled: false)], revocations: [7: []], asked: [7], started: clock.now)
        let trusted = cache.identity(signed: Self.claims(), accessTokenHash: hash)
        #expect(trusted?.tenantSlug == "seven" && trusted?.username == "seventy" && trusted?.accessTokenHash == hash)
        #expect(cache.verifiedHere == 1)
        // Its session revoked at epoch 7: this token (4) and one issued at 6 go to the
        // database; one issued at 7 or later, and another session's, are trusted.
        cache.observe(
            [7: .init(epoch: 7, slug: "seven", disabled: false)], revocations: [7: [.init(epoch: 7, userID: 70, sessionID: 700)]],
            asked: [7], started: clock.now)
        #expect(cache.identity(signed: Self.claims(), accessTokenHash: hash) == nil)
        #expect(cache.identity(signed: Self.claims(epoch: 6), accessTokenHash: hash) == nil)
        #expect(cache.identity(signed: Self.claims(epoch: 7), accessTokenHash: hash) != nil)
        #expect(cache.identity(signed: Self.claims(userID: 71, sessionID: 710), accessTokenHash: hash) != nil)
        // Expired by the wall clock it carries.
        #expect(cache.identity(signed: Self.claims(epoch: 7, expires: 1_900_000_000), accessTokenHash: hash) == nil)
        #expect(cache.identity(signed: Self.claims(epoch: 7, expires: 1_900_000_001), accessTokenHash: hash) != nil)
        unix.withLock { $0 += 1 }
        #expect(cache.identity(signed: Self.claims(epoch: 7, expires: 1_900_000_001), accessTokenHash: hash) == nil)
        // The feed stalls: past the age, nothing is trusted (fails closed).
        clock.advance(.milliseconds(760))
        #expect(cache.identity(signed: Self.claims(epoch: 7), accessTokenHash: hash) == nil)
        // This replica revokes something there: only a poll that began afterwards counts.
        let before = clock.now
        clock.advance(.milliseconds(10))
        cache.forget(tenantID: 7)
        cache.observe([7: .init(epoch: 8, slug: "seven", disabled: false)], revocations: [7: []], asked: [7], started: before)
        #expect(cache.identity(signed: Self.claims(epoch: 8), accessTokenHash: hash) == nil, "the poll began before the revocation")
        clock.advance(.milliseconds(10))
        cache.observe([7: .init(epoch: 8, slug: "seven", disabled: false)], revocations: [7: []], asked: [7], started: clock.now)
        #expect(cache.identity(signed: Self.claims(epoch: 8), accessTokenHash: hash) != nil)
        // A disabled tenant, then one gone.
        cache.observe([7: .init(epoch: 8, slug: "seven", disabled: true)], asked: [7], started: clock.now)
        #expect(cache.identity(signed: Self.claims(epoch: 8), accessTokenHash: hash) == nil)
        cache.observe([:], asked: [7], started: clock.now)
        #expect(cache.identity(signed: Self.claims(epoch: 8), accessTokenHash: hash) == nil)
        // With the cache off, nothing signed is trusted either.
        let off = AccessTokenCache(settings: .init(capacity: 0, pollInterval: .milliseconds(200), maxAge: .milliseconds(750)), now: { clock.now })
        off.observe([7: .init(epoch: 0, slug: "seven", disabled: false)], asked: [7], started: clock.now)
        #expect(off.identity(signed: Self.claims(), accessTokenHash: hash) == nil)
    }

    @Test func aRevocationIsRememberedForAnAccessTokensLifetimeOnly() {
        let clock = ManualClock()
        let cache = AccessTokenCache(
            settings: .init(capacity: 100, pollInterval: .milliseconds(200), maxAge: .milliseconds(750), revocationMemory: .seconds(60)),
            now: { clock.now })
        _ = cache.identity(signed: Self.claims(), accessTokenHash: [9])
        cache.observe(
            [7: .init(epoch: 5, slug: "seven", disabled: false)], revocations: [7: [.init(epoch: 5, userID: 70, sessionID: nil)]],
            asked: [7], started: clock.now)
        #expect(cache.identity(signed: Self.claims(), accessTokenHash: [9]) == nil)
        clock.advance(.seconds(61))
        // Still in use (the feed had stalled, so the database answered): still followed.
        #expect(cache.identity(signed: Self.claims(), accessTokenHash: [9]) == nil)
        cache.observe([7: .init(epoch: 5, slug: "seven", disabled: false)], asked: [7], started: clock.now)
        // A token of epoch 4 could not live this long after 5; the memory is bounded.
        #expect(cache.identity(signed: Self.claims(), accessTokenHash: [9]) != nil)
    }

    @Test func aTenantAPollDidNotAskForIsLeftAlone() {
        let clock = ManualClock()
        let cache = Self.cache(clock)
        let kept = Self.identity()
        cache.keep(kept, epoch: 1, secondsLeft: 60, checked: clock.now)
        // Began before the token was kept, so it read other tenants only.
        cache.observe([8: .init(epoch: 9, slug: "eight", disabled: false)], asked: [8], started: clock.now)
        #expect(cache.identity(accessTokenHash: kept.accessTokenHash) != nil)
    }

    @Test func aKeptTokenExpiresWithTheDatabasesSecondsLeft() {
        let clock = ManualClock()
        let cache = Self.cache(clock)
        let kept = Self.identity()
        cache.keep(kept, epoch: 0, secondsLeft: 0.5, checked: clock.now)
        clock.advance(.milliseconds(490))
        #expect(cache.identity(accessTokenHash: kept.accessTokenHash) != nil)
        clock.advance(.milliseconds(20))
        #expect(cache.identity(accessTokenHash: kept.accessTokenHash) == nil)
        // Expired by the time the lookup's answer came back: not kept at all.
        cache.keep(kept, epoch: 0, secondsLeft: -1, checked: clock.now)
        #expect(cache.keptIdentity(accessTokenHash: kept.accessTokenHash) == nil)
    }

    @Test func forgettingATenantDropsItsTokensAlone() {
        let clock = ManualClock()
        let cache = Self.cache(clock)
        cache.keep(Self.identity(hash: [1]), epoch: 0, secondsLeft: 60, checked: clock.now)
        cache.keep(Self.identity(tenantID: 8, slug: "eight", hash: [2]), epoch: 0, secondsLeft: 60, checked: clock.now)
        cache.forget(tenantID: 7)
        #expect(cache.identity(accessTokenHash: [1]) == nil)
        #expect(cache.identity(accessTokenHash: [2]) != nil)
    }

    @Test func aFullCacheMakesRoomFromExpiredTokensOnlyAndAnEmptyOneKeepsNothing() {
        let clock = ManualClock()
        let cache = Self.cache(clock, capacity: 2)
        cache.keep(Self.identity(hash: [1]), epoch: 0, secondsLeft: 0.1, checked: clock.now)
        cache.keep(Self.identity(hash: [2]), epoch: 0, secondsLeft: 60, checked: clock.now)
        cache.keep(Self.identity(hash: [3]), epoch: 0, secondsLeft: 60, checked: clock.now)
        #expect(cache.identity(accessTokenHash: [3]) == nil, "full of live tokens: looked up each time")
        clock.advance(.milliseconds(200))
        cache.keep(Self.identity(hash: [3]), epoch: 0, secondsLeft: 60, checked: clock.now)
        #expect(cache.identity(accessTokenHash: [3]) != nil)
        #expect(cache.identity(accessTokenHash: [2]) != nil)
        let off = Self.cache(clock, capacity: 0)
        off.keep(Self.identity(), epoch: 0, secondsLeft: 60, checked: clock.now)
        #expect(off.identity(accessTokenHash: Self.identity().accessTokenHash) == nil)
    }

    // MARK: - The epochs (migration 0045)

    static func epoch(_ tenant: String) async throws -> Int64 {
        try await TestEnvironment.ownerScalar(
            "SELECT coalesce((SELECT epoch FROM auth_epochs WHERE tenant_id = (SELECT id FROM tenants WHERE slug = \(tenant))), 0)",
            as: Int64.self)
    }

    @Test func onlyWhatTakesAccessAwayRaisesTheEpoch() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let user = try await client.signup("epoch_e", tenant: tenant)
            var last = try await Self.epoch(tenant)
            func expectRaised(_ raised: Bool, _ what: String) async throws {
                let now = try await Self.epoch(tenant)
                #expect((now > last) == raised, "\(what): epoch \(last) → \(now)")
                last = now
            }
            let owner = Self.psql
            // A refresh, a note, a second session, expired tokens' retention: nothing taken away.
            let refreshed = try await client.call(.post, "/v1/auth/refresh", json: ["refresh_token": user.refreshToken], tenant: tenant)
            #expect(refreshed.status == .ok)
            _ = try await client.createNote(user, "an ordinary note", lat: 1, lng: 1)
            let login = try await client.call(.post, "/v1/auth/login", json: ["username": user.username, "password": user.password], tenant: tenant)
            #expect(login.status == .ok)
            try await owner("""
                UPDATE session_tokens SET expires_at = now() - interval '1 hour'
                WHERE tenant_id = (SELECT id FROM tenants WHERE slug = \(tenant)) AND kind = 'refresh'
                """)
            try await owner("DELETE FROM session_tokens WHERE tenant_id = (SELECT id FROM tenants WHERE slug = \(tenant)) AND expires_at < now()")
            try await expectRaised(false, "refresh, note, login, expired tokens deleted")
            // What does: each raises it in its own transaction. (Disabling ends the sessions too.)
            try await owner("SELECT admin.set_user_disabled(\(tenant), \(user.username), true)")
            try await expectRaised(true, "user disabled")
            try await owner("SELECT admin.set_user_disabled(\(tenant), \(user.username), false)")
            try await expectRaised(true, "user enabled (its name's state changed)")
            let access = try await client.call(.post, "/v1/auth/login", json: ["username": user.username, "password": user.password], tenant: tenant)
            #expect(access.status == .ok)
            try await expectRaised(false, "login")
            let third = try access.decode(API.TokenResponse.self)
            #expect(try await client.call(.post, "/v1/auth/logout", token: third.accessToken).status == .noContent)
            try await expectRaised(true, "logout")
            try await owner("""
                UPDATE session_tokens SET expires_at = now() + interval '30 minutes'
                WHERE tenant_id = (SELECT id FROM tenants WHERE slug = \(tenant)) AND kind = 'access' AND expires_at > now()
                """)
            try await expectRaised(true, "live access tokens cut short")
            try await owner("UPDATE users SET username = 'epoch_renamed' WHERE tenant_id = (SELECT id FROM tenants WHERE slug = \(tenant))")
            try await expectRaised(true, "renamed")
            try await owner("DELETE FROM session_tokens WHERE tenant_id = (SELECT id FROM tenants WHERE slug = \(tenant)) AND kind = 'access' AND expires_at > now()")
            try await expectRaised(true, "live access tokens deleted")
            try await owner("DELETE FROM users WHERE tenant_id = (SELECT id FROM tenants WHERE slug = \(tenant))")
            try await expectRaised(true, "user deleted")
            // Each raise wrote the revocation it raised to, naming its user or session (0046).
            let written = try await TestEnvironment.ownerScalar(
                """
                SELECT count(*) FILTER (WHERE user_id IS NOT NULL OR session_id IS NOT NULL)::bigint FROM auth_revocations
                WHERE tenant_id = (SELECT id FROM tenants WHERE slug = \(tenant))
                """, as: Int64.self)
            #expect(written == last)
        }
    }

    // MARK: - Two replicas on one database

    /// One revoking action, taken on replica A (or with psql), and what B must refuse after.
    struct Revocation: Sendable {
        let name: String
        let act: @Sendable (_ a: any TestClientProtocol, _ victim: Account, _ other: Account, _ moderator: Account) async throws -> Void
        /// Taken through A's API: A refuses at once, before any poll.
        var local = true
    }

    /// A statement as an operator would run it with psql (as the owner, past row-level security).
    static func psql(_ sql: PostgresQuery) async throws {
        try await TestEnvironment.withOwnerPool { try await $0.query(sql) }
    }

    static let revocations: [Revocation] = [
        Revocation(name: "logout") { a, victim, _, _ in
            let answer = try await a.call(.post, "/v1/auth/logout", token: victim.accessToken)
            #expect(answer.status == .noContent)
        },
        Revocation(name: "logout everywhere, from another session") { a, _, other, _ in
            let answer = try await a.call(.post, "/v1/auth/logout?all=true", token: other.accessToken)
            #expect(answer.status == .noContent)
        },
        Revocation(name: "password changed in another session") { a, victim, other, _ in
            let changed = try await a.call(
                .patch, "/v1/me", json: ["password": ["current": victim.password, "new": "another sturdy passphrase"]], token: other.accessToken)
            #expect(changed.status == .ok)
        },
        Revocation(name: "account deleted") { a, victim, _, _ in
            let answer = try await a.call(.delete, "/v1/me", json: ["password": victim.password], token: victim.accessToken)
            #expect(answer.status == .noContent)
        },
        Revocation(name: "banned by a moderator") { a, victim, other, moderator in
            _ = other
            #expect(try await a.report(moderator, "user", victim.userID, reason: "spam").status == .created)
            let decided = try await a.call(
                .post, "/v1/moderation/targets/user/\(victim.userID)/decision", json: ["action": "ban_author"], token: moderator.accessToken)
            #expect(decided.status == .ok, "\(decided.body)")
        },
        Revocation(name: "user disabled with psql", act: { _, victim, _, _ in
            try await psql("SELECT admin.set_user_disabled(\(victim.tenant), \(victim.username), true)")
        }, local: false),
        Revocation(name: "sessions ended with psql", act: { _, victim, _, _ in
            try await psql("SELECT admin.end_user_sessions(\(victim.tenant), \(victim.username))")
        }, local: false),
        Revocation(name: "tenant disabled with psql", act: { _, victim, _, _ in
            try await psql("SELECT admin.set_tenant_disabled(\(victim.tenant), true)")
        }, local: false),
        Revocation(name: "access tokens cut short with psql", act: { _, victim, _, _ in
            try await psql("""
                UPDATE session_tokens SET expires_at = now() WHERE kind = 'access'
                  AND tenant_id = (SELECT id FROM tenants WHERE slug = \(victim.tenant))
                """)
        }, local: false),
    ]

    @Test func aRevocationOnOneReplicaIsRefusedByAnotherAfterItsNextPoll() async throws {
        try await TestEnvironment.migrate()
        // What B refuses depends on its next poll, not on the age rule (the unit tests pin
        // that): a long one keeps a busy machine from sending B's request to the database.
        let configuration = try TestEnvironment.configuration(SignedAccessTokenTests.patientCache)
        let partsA = try await AppParts(configuration: configuration, logger: TestEnvironment.logger)
        let partsB = try await AppParts(configuration: configuration, logger: TestEnvironment.logger)
        let (appA, appB) = (buildApplication(partsA, logger: TestEnvironment.logger), buildApplication(partsB, logger: TestEnvironment.logger))
        try await appA.test(.router) { a in
            try await appB.test(.router) { b in
                var seen = [String]()
                for (index, revocation) in Self.revocations.enumerated() {
                    let tenant = try await TestEnvironment.makeTenant()
                    let victim = try await a.signup("victim_\(index)", tenant: tenant)
                    let moderator = try await a.signup("moderator_\(index)", tenant: tenant)
                    try await ModerationTests.makeModerator(moderator)
                    let login = try await a.call(
                        .post, "/v1/auth/login", json: ["username": victim.username, "password": victim.password], tenant: tenant)
                    var other = victim
                    other.accessToken = try login.decode(API.TokenResponse.self).accessToken
                    // Both replicas know the token, and B keeps it.
                    let hash = Tokens.sha256(victim.accessToken)
                    for client in [a, b] {
                        #expect(try await client.call(.get, "/v1/me", token: victim.accessToken).status == .ok, "\(revocation.name)")
                    }
                    #expect(partsB.tokenCache.keptIdentity(accessTokenHash: hash) != nil, "\(revocation.name): B keeps the token")
                    // Once B has polled the tenant it follows, B verifies the signed token itself.
                    await partsB.tokenCache.nextPoll()
                    let verified = partsB.tokenCache.verifiedHere
                    #expect(try await b.call(.get, "/v1/me", token: victim.accessToken).status == .ok, "\(revocation.name)")
                    #expect(partsB.tokenCache.verifiedHere == verified + 1, "\(revocation.name): B verified it without the database")

                    let acted = ContinuousClock.now
                    try await revocation.act(a, victim, other, moderator)
                    if revocation.local {
                        #expect(try await a.call(.get, "/v1/me", token: victim.accessToken).status == .unauthorized, "\(revocation.name): A at once")
                    }
                    await partsB.tokenCache.nextPoll()
                    let seenAfter = ContinuousClock.now - acted
                    #expect(partsB.tokenCache.keptIdentity(accessTokenHash: hash) == nil, "\(revocation.name): B dropped it")
                    #expect(try await b.call(.get, "/v1/me", token: victim.accessToken).status == .unauthorized, "\(revocation.name): B")
                    await partsA.tokenCache.nextPoll()
                    #expect(try await a.call(.get, "/v1/me", token: victim.accessToken).status == .unauthorized, "\(revocation.name): A")
                    seen.append("\(revocation.name): \(seenAfter)")
                }
                TestEnvironment.logger.notice("revocations seen by replica B", metadata: ["after": "\(seen)"])
            }
        }
    }

    /// `LR_TOKEN_CACHE_ENTRIES=0`: every token looked up, and the service runs as before (its
    /// poller waits idle: a service that returned would end the whole application).
    @Test func withTheCacheOffEveryRequestLooksItsTokenUp() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withLiveApp({ $0.accounts.tokenCacheEntries = 0 }) { client, _ in
            let user = try await client.signup("uncached_u", tenant: tenant)
            for _ in 0..<3 {
                #expect(try await client.call(.get, "/v1/me", token: user.accessToken).status == .ok)
            }
            try await Self.psql("SELECT admin.end_user_sessions(\(tenant), 'uncached_u')")
            #expect(try await client.call(.get, "/v1/me", token: user.accessToken).status == .unauthorized, "at once: nothing kept")
        }
    }

    @Test func aUsernameChangedWithPsqlReachesAnotherReplicasRequests() async throws {
        try await TestEnvironment.migrate()
        let configuration = try TestEnvironment.configuration()
        let parts = try await AppParts(configuration: configuration, logger: TestEnvironment.logger)
        try await buildApplication(parts, logger: TestEnvironment.logger).test(.router) { client in
            let tenant = try await TestEnvironment.makeTenant()
            let user = try await client.signup("renamed_r", tenant: tenant)
            #expect(try await client.call(.get, "/v1/me", token: user.accessToken).status == .ok)
            #expect(parts.tokenCache.keptIdentity(accessTokenHash: Tokens.sha256(user.accessToken))?.username == "renamed_r")
            try await Self.psql("UPDATE users SET username = 'renamed_s' WHERE tenant_id = (SELECT id FROM tenants WHERE slug = \(tenant))")
            await parts.tokenCache.nextPoll()
            #expect(parts.tokenCache.keptIdentity(accessTokenHash: Tokens.sha256(user.accessToken)) == nil)
            #expect(try await client.call(.get, "/v1/me", token: user.accessToken).status == .ok)
            #expect(parts.tokenCache.keptIdentity(accessTokenHash: Tokens.sha256(user.accessToken))?.username == "renamed_s")
        }
    }
}
