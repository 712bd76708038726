import Credentials
import Foundation
import HTTPTypes
import HummingbirdTesting
@testable import LandmarkRemark
import Postgres
import Testing

/// Signed access tokens (issue 38): a replica verifies them with its keys and trusts them
/// without the database while no revocation of their session is newer; anything it cannot
/// verify is looked up, so only the database refuses.
@Suite(.timeLimit(.minutes(10))) struct SignedAccessTokenTests {
    static let signer = AccessTokenSigner(keys: [TestEnvironment.testSigningKey])
    static let otherKey = AccessTokenKey(id: 2, secret: Array(repeating: 9, count: 32))
    /// What tests that count tokens verified here set: a poll's confirmation lasts longer than
    /// a busy machine may take between the poll and the request. What is revoked still counts
    /// after the next poll, and that is what the tests about revocation wait for.
    static func patientCache(_ configuration: inout AppConfiguration) {
        configuration.accounts.tokenCacheMaxAge = .seconds(300)
    }

    // MARK: - The form alone

    @Test func aTokenVerifiesUnderTheKeyThatSignedItAndNoChangedOneDoes() throws {
        let claims = AccessTokenSigner.Claims(tenantID: 42, userID: 7, sessionID: 9, expires: 2_000_000_000, epoch: 3, username: "ada.l-_9")
        let token = try #require(Self.signer.mint(claims))
        #expect(token.hasPrefix("lr_at_42_"))
        #expect(token.utf8.count <= AccessTokenSigner.maximumLength)
        #expect(Self.signer.verify(token) == claims)
        #expect(AccessTokenSigner.tenantID(of: token) == 42)
        #expect(Self.signer.mint(claims) != token, "each token has random bytes of its own")
        // Rotation: a ring with a new first key verifies the old key's tokens, and signs with the new.
        let rotated = AccessTokenSigner(keys: [Self.otherKey, TestEnvironment.testSigningKey])
        #expect(rotated.verify(token) == claims)
        let newer = try #require(rotated.mint(claims))
        #expect(Self.signer.verify(newer) == nil, "a key this ring lacks")
        #expect(AccessTokenSigner(keys: [Self.otherKey]).verify(token) == nil)
        // Another secret under the same id: a wrong key.
        #expect(AccessTokenSigner(keys: [AccessTokenKey(id: 1, secret: Array(repeating: 8, count: 32))]).verify(token) == nil)
        // Every byte changed, in turn, and every truncation, fail.
        var bytes = Array(token.utf8)
        for index in bytes.indices {
            let original = bytes[index]
            bytes[index] = original == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
            #expect(Self.signer.verify(String(decoding: bytes, as: UTF8.self)) == nil, "byte \(index) changed")
            bytes[index] = original
        }
        for length in 0..<token.utf8.count {
            #expect(Self.signer.verify(String(token.utf8.prefix(length))!) == nil, "cut to \(length)")
        }
        // The tenant is signed: moved to another, the tag no longer matches.
        #expect(Self.signer.verify(token.replacingOccurrences(of: "lr_at_42_", with: "lr_at_43_")) == nil)
        // Opaque tokens are not of this form at all.
        #expect(Self.signer.verify(Tokens.tenantToken(prefix: "lr_at_", tenantID: 42)) == nil)
        #expect(AccessTokenSigner.tenantID(of: Tokens.tenantToken(prefix: "lr_at_", tenantID: 42)) == nil)
        // A username too long to carry: the caller issues an opaque token.
        #expect(Self.signer.mint(.init(tenantID: 42, userID: 7, sessionID: 9, expires: 1, epoch: 0, username: String(repeating: "x", count: 256))) == nil)
    }

    @Test func theKeysSettingIsReadStrictly() throws {
        let key = Data(repeating: 1, count: 32).base64EncodedString()
        let keys = try AccessTokenKey.list("3:\(key), 1:\(key)")
        #expect(keys.map(\.id) == [3, 1])
        for bad in ["", "3", "0:\(key)", "256:\(key)", "x:\(key)", "3:short", "3:\(key),3:\(key)", "3:\(key),"] {
            #expect(throws: ConfigurationError.self, "\(bad)") { try AccessTokenKey.list(bad) }
        }
    }

    // MARK: - Against the service

    /// The claims of a token the service issued.
    static func claims(_ token: String) throws -> AccessTokenSigner.Claims {
        try #require(signer.verify(token), "issued signed: \(token)")
    }

    @Test func aSignedTokenIsVerifiedWithoutTheDatabaseOnceItsTenantIsFollowed() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withAppParts(Self.patientCache) { client, parts in
            let user = try await client.signup("signed_s", tenant: tenant)
            let claims = try Self.claims(user.accessToken)
            #expect(String(claims.userID) == user.userID && claims.username == "signed_s")
            // The first request follows the tenant (and looks the token up); after a poll, none do.
            #expect(try await client.call(.get, "/v1/me", token: user.accessToken).status == .ok)
            await parts.tokenCache.nextPoll()
            let before = parts.tokenCache.verifiedHere
            for _ in 0..<3 {
                #expect(try await client.call(.get, "/v1/me", token: user.accessToken).status == .ok)
            }
            #expect(parts.tokenCache.verifiedHere == before + 3)
            // X-Tenant must still name the token's tenant.
            let mismatch = try await client.call(.get, "/v1/me", token: user.accessToken, tenant: "not-\(tenant)")
            #expect(mismatch.status != .ok)
        }
    }

    @Test func forgedExpiredWrongTenantWrongKeyAndTruncatedTokensAreRefused() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        let otherTenant = try await TestEnvironment.makeTenant()
        try await withAppParts { client, parts in
            let user = try await client.signup("refused_r", tenant: tenant)
            let stranger = try await client.signup("refused_s", tenant: otherTenant)
            let claims = try Self.claims(user.accessToken)
            #expect(try await client.call(.get, "/v1/me", token: user.accessToken).status == .ok)
            await parts.tokenCache.nextPoll()
            let strangerTenant = try Self.claims(stranger.accessToken).tenantID
            func withClaims(_ change: (inout (Int64, Int64, Int64)) -> Void, signer: AccessTokenSigner = Self.signer) -> String {
                var values = (claims.tenantID, claims.expires, claims.epoch)
                change(&values)
                return signer.mint(
                    .init(tenantID: values.0, userID: claims.userID, sessionID: claims.sessionID, expires: values.1, epoch: values.2, username: claims.username))!
            }
            var payload = Array(user.accessToken.utf8)
            let dot = payload.lastIndex(of: UInt8(ascii: "."))!
            payload[dot - 3] = payload[dot - 3] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
            let refused: [(String, String)] = [
                ("a claim changed (forged)", String(decoding: payload, as: UTF8.self)),
                ("expired", withClaims { $0.1 = Int64(Date().timeIntervalSince1970) - 1 }),
                ("another tenant, its tag kept", user.accessToken.replacingOccurrences(of: "lr_at_\(claims.tenantID)_", with: "lr_at_\(strangerTenant)_")),
                ("another tenant, signed", withClaims { $0.0 = strangerTenant }),
                ("a key this service lacks", withClaims({ _ in }, signer: AccessTokenSigner(keys: [Self.otherKey]))),
                ("another secret under its key's id", withClaims({ _ in }, signer: AccessTokenSigner(keys: [.init(id: 1, secret: Array(repeating: 3, count: 32))]))),
                ("its tag cut short", String(user.accessToken.dropLast(2))),
                ("its tag gone", String(user.accessToken[..<user.accessToken.lastIndex(of: ".")!])),
                ("half of it", String(user.accessToken.prefix(user.accessToken.count / 2))),
                ("too long", user.accessToken + String(repeating: "A", count: 400)),
            ]
            for (what, token) in refused {
                let answer = try await client.call(.get, "/v1/me", token: token)
                #expect(answer.status == .unauthorized, "\(what)")
                #expect(answer.headers[.contentType] == "application/problem+json", "\(what)")
            }
            // The genuine token still works, and the stranger's only in its own tenant.
            #expect(try await client.call(.get, "/v1/me", token: user.accessToken).status == .ok)
            #expect(try await client.call(.get, "/v1/me", token: stranger.accessToken, tenant: tenant).status != .ok)
        }
    }

    @Test func tokensOfTheOldFormsStillWork() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withAppParts { client, _ in
            let user = try await client.signup("old_forms", tenant: tenant)
            let claims = try Self.claims(user.accessToken)
            // As issued before tokens were signed: opaque with the tenant, and the legacy form.
            let opaque = Tokens.tenantToken(prefix: "lr_at_", tenantID: claims.tenantID)
            let legacy = Tokens.randomToken(prefix: "lr_at_")
            for token in [opaque, legacy] {
                try await TestEnvironment.withOwnerPool { pool in
                    try await pool.query("""
                        INSERT INTO session_tokens (tenant_id, token_hash, session_id, kind, expires_at)
                        VALUES (\(claims.tenantID), \(PostgresBytes(Tokens.sha256(token))), \(claims.sessionID), 'access', now() + interval '1 hour')
                        """)
                }
                let me = try await client.call(.get, "/v1/me", token: token)
                #expect(me.status == .ok, "\(token.prefix(12))…")
                #expect(me.body.contains("old_forms"))
            }
            #expect(try await client.call(.post, "/v1/auth/logout", token: opaque).status == .noContent)
            for token in [opaque, legacy, user.accessToken] {
                #expect(try await client.call(.get, "/v1/me", token: token).status == .unauthorized, "the session ended")
            }
        }
    }

    /// A rolling rotation: replica A still signs with key 1; B, restarted with key 2 first
    /// and key 1 second, signs with 2. Requests with either token, on either replica, while
    /// both run: none is refused. B verifies A's tokens itself; A looks B's up.
    @Test func aKeyRotationWhileRequestsRunLosesNone() async throws {
        try await TestEnvironment.migrate()
        let tenant = try await TestEnvironment.makeTenant()
        let partsA = try await AppParts(configuration: try TestEnvironment.configuration(Self.patientCache), logger: TestEnvironment.logger)
        let partsB = try await AppParts(
            configuration: try TestEnvironment.configuration {
                Self.patientCache(&$0)
                $0.accounts.accessTokenKeys = [Self.otherKey, TestEnvironment.testSigningKey]
            },
            logger: TestEnvironment.logger)
        try await buildApplication(partsA, logger: TestEnvironment.logger).test(.router) { a in
            try await buildApplication(partsB, logger: TestEnvironment.logger).test(.router) { b in
                let fromA = try await a.signup("rotate_a", tenant: tenant)
                let fromB = try await b.signup("rotate_b", tenant: tenant)
                #expect(Self.signer.verify(fromA.accessToken) != nil)
                #expect(Self.signer.verify(fromB.accessToken) == nil, "B signs with the new key")
                #expect(AccessTokenSigner(keys: [Self.otherKey]).verify(fromB.accessToken) != nil)
                let verifiedByB = partsB.tokenCache.verifiedHere
                let statuses = try await withThrowingTaskGroup(of: [HTTPResponse.Status].self) { group in
                    for (client, parts) in [(a, partsA), (b, partsB)] {
                        for token in [fromA.accessToken, fromB.accessToken] {
                            group.addTask {
                                var seen = [HTTPResponse.Status]()
                                for round in 0..<20 {
                                    // Halfway, each replica's tenant is followed and confirmed.
                                    if round == 10 { await parts.tokenCache.nextPoll() }
                                    seen.append(try await client.call(.get, "/v1/me", token: token).status)
                                }
                                return seen
                            }
                        }
                    }
                    return try await group.reduce(into: []) { $0 += $1 }
                }
                #expect(statuses.count == 80)
                #expect(statuses.allSatisfy { $0 == .ok }, "\(Set(statuses.map(\.code)))")
                #expect(partsB.tokenCache.verifiedHere > verifiedByB, "B verified the old key's tokens itself")
            }
        }
    }
}
