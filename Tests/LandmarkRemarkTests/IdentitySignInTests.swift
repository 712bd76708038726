import Foundation
import HTTPTypes
import HummingbirdTesting
import IdentityProviderFake
import LandmarkRemark
import Testing

/// `POST /v1/auth/id-token` against a real provider on loopback: accounts keyed by
/// `(tenant, provider, sub)`, and every check a token must pass.
@Suite(.timeLimit(.minutes(10))) struct IdentitySignInTests {
    @Test func firstSignInCreatesTheAccountAndLaterOnesSignIn() async throws {
        try await IdentityTest.withProvider { idp in
            let tenant = try await TestEnvironment.makeTenant()
            try await IdentityTest.enable(tenant: tenant, provider: idp)
            try await withApp(IdentityTest.trusting(idp)) { client in
                let first = try await client.signIn(
                    idToken: try await IdentityTest.token(idp, subject: "sub-1", email: "Ada.Lovelace@example.org") {
                        $0["name"] = .string("Ada Lovelace")
                    }, tenant: tenant)
                #expect(first.status == .created, "\(first.body)")
                let created = try first.decode(API.TokenResponse.self)
                #expect(created.user.username == "ada.lovelace")
                // The provider's email is not the account's: ours are unverified and unique.
                #expect(created.user.email == nil)

                let again = try await client.signIn(idToken: try await IdentityTest.token(idp, subject: "sub-1"), tenant: tenant)
                #expect(again.status == .ok, "\(again.body)")
                #expect(try again.decode(API.TokenResponse.self).user.id == created.user.id)

                let me = try await client.me(created.accessToken)
                #expect(me.hasPassword == false && me.guest == false)
                #expect(me.identities.map(\.provider) == ["oidc:test"])
                #expect(me.identities.first?.email == "Ada.Lovelace@example.org")
                // No password: a password login with any password fails like any wrong one.
                let login = try await client.call(
                    .post, "/v1/auth/login", json: ["username": "ada.lovelace", "password": "anything at all 1"], tenant: tenant)
                #expect(login.code == "invalid_credentials")
                // Another subject with the same email is another account: emails never link.
                let other = try await client.signIn(
                    idToken: try await IdentityTest.token(idp, subject: "sub-2", email: "Ada.Lovelace@example.org"), tenant: tenant)
                #expect(other.status == .created)
                let second = try other.decode(API.TokenResponse.self)
                #expect(second.user.id != created.user.id)
                // Without a name the username is random: never the email's local part (usernames are public).
                #expect(second.user.username.hasPrefix("user-") && !second.user.username.contains("ada"))
            }
        }
    }

    /// A double tap: two first sign-ins of one identity at once make one account, not an error.
    @Test func concurrentFirstSignInsMakeOneAccount() async throws {
        try await IdentityTest.withProvider { idp in
            let tenant = try await TestEnvironment.makeTenant()
            try await IdentityTest.enable(tenant: tenant, provider: idp)
            try await withApp(IdentityTest.trusting(idp)) { client in
                for round in 0..<5 {
                    let tokens = [
                        try await IdentityTest.token(idp, subject: "tap-\(round)", email: "tap@example.org"),
                        try await IdentityTest.token(idp, subject: "tap-\(round)", email: "tap@example.org"),
                    ]
                    let responses = try await withThrowingTaskGroup(of: APIResponse.self) { group in
                        for token in tokens { group.addTask { try await client.signIn(idToken: token, tenant: tenant) } }
                        return try await group.reduce(into: []) { $0.append($1) }
                    }
                    #expect(responses.map(\.status.code).sorted() == [200, 201], "\(responses.map(\.body))")
                    let users = Set(try responses.map { try $0.decode(API.TokenResponse.self).user.id })
                    #expect(users.count == 1)
                }
                #expect(try await IdentityTest.userCount(tenant: tenant) == 5)
            }
        }
    }

    /// The same double tap when the app passes the username the user chose (Apple sends the
    /// name only with the first sign-in): the taken name is the very account the other tap
    /// made, so every tap signs in to it (issue 35: 409 username_taken in 5 of 10 pairs before).
    /// A name another identity holds is still refused.
    @Test func concurrentFirstSignInsWithAChosenUsernameMakeOneAccount() async throws {
        try await IdentityTest.withProvider { idp in
            let tenant = try await TestEnvironment.makeTenant()
            try await IdentityTest.enable(tenant: tenant, provider: idp)
            try await withApp(IdentityTest.trusting(idp)) { client in
                for (round, taps) in [2, 2, 2, 4, 4, 10].enumerated() {
                    var tokens: [String] = []
                    for _ in 0..<taps { tokens.append(try await IdentityTest.token(idp, subject: "chosen-\(round)")) }
                    let responses = try await withThrowingTaskGroup(of: APIResponse.self) { group in
                        for token in tokens {
                            group.addTask { try await client.signIn(idToken: token, username: "Chooser\(round)", tenant: tenant) }
                        }
                        return try await group.reduce(into: []) { $0.append($1) }
                    }
                    #expect(responses.map(\.status.code).sorted() == Array(repeating: 200, count: taps - 1) + [201], "\(responses.map(\.body))")
                    let users = Set(try responses.map { try $0.decode(API.TokenResponse.self).user.username })
                    #expect(users == ["Chooser\(round)"])
                }
                #expect(try await IdentityTest.userCount(tenant: tenant) == 6)
                let other = try await client.signIn(
                    idToken: try await IdentityTest.token(idp, subject: "someone-else"), username: "chooser0", tenant: tenant)
                #expect(other.status == .conflict && other.code == "username_taken")
            }
        }
    }

    @Test func theSameSubjectInAnotherTenantIsAnotherAccountAndEachTenantHasItsClientIDs() async throws {
        try await IdentityTest.withProvider { idp in
            let a = try await TestEnvironment.makeTenant()
            let b = try await TestEnvironment.makeTenant()
            try await IdentityTest.enable(tenant: a, provider: idp, clientIDs: ["app.a.ios", "app.a.android"])
            try await IdentityTest.enable(tenant: b, provider: idp, clientIDs: ["app.b.web"])
            try await withApp(IdentityTest.trusting(idp)) { client in
                let inA = try await client.signedIn(idToken: try await IdentityTest.token(idp, subject: "same", audience: "app.a.android"), tenant: a)
                let inB = try await client.signedIn(idToken: try await IdentityTest.token(idp, subject: "same", audience: "app.b.web"), tenant: b)
                #expect(inA.userID != inB.userID)
                #expect(try await IdentityTest.userCount(tenant: a) == 1)
                #expect(try await IdentityTest.userCount(tenant: b) == 1)
                // A's token is not good in B, nor B's in A.
                let crossed = try await client.signIn(idToken: try await IdentityTest.token(idp, subject: "same", audience: "app.a.ios"), tenant: b)
                #expect(crossed.code == "id_token_invalid")
                #expect(crossed.detail?.contains("aud") == true)
                let back = try await client.signIn(idToken: try await IdentityTest.token(idp, subject: "same", audience: "app.b.web"), tenant: a)
                #expect(back.code == "id_token_invalid")
                // An access token of A's account does not reach B.
                let crossing = try await client.call(.get, "/v1/me", token: inA.token, tenant: b)
                #expect(crossing.status == .forbidden && crossing.code == "tenant_mismatch")
            }
        }
    }

    /// Each bad token is `401 id_token_invalid`, its detail names the check, and nothing is created.
    @Test func everyCheckRefusesItsBadToken() async throws {
        try await IdentityTest.withProvider { idp in
            let tenant = try await TestEnvironment.makeTenant()
            try await IdentityTest.enable(tenant: tenant, provider: idp)
            try await withApp(IdentityTest.trusting(idp)) { client in
                let now = IdentityTest.now
                let rsaKID = idp.rsaKeyID
                let cases: [(String, String, String)] = [
                    ("wrong aud", try await IdentityTest.token(idp, subject: "x", audience: "someone.else"), "aud"),
                    ("wrong iss", try await IdentityTest.token(idp, subject: "x") { $0["iss"] = .string("https://evil.example") }, "iss"),
                    ("expired", try await IdentityTest.token(idp, subject: "x") { $0["exp"] = .number(now - 61 - 30); $0["iat"] = .number(now - 700) }, "expired"),
                    ("not yet valid", try await IdentityTest.token(idp, subject: "x") { $0["nbf"] = .number(now + 300) }, "not valid yet"),
                    ("issued in the future", try await IdentityTest.token(idp, subject: "x") { $0["iat"] = .number(now + 300) }, "future"),
                    ("no exp", try await IdentityTest.token(idp, subject: "x") { $0["exp"] = nil }, "no exp"),
                    ("no sub", try await IdentityTest.token(idp, subject: "x") { $0["sub"] = nil }, "sub"),
                    ("bad signature", try await IdentityTest.token(idp, subject: "x", key: .foreignRSA), "signature"),
                    ("bad EC signature", try await IdentityTest.token(idp, subject: "x", key: .foreignEC), "signature"),
                    ("alg none", idp.mintUnsigned(idp.claims(subject: "x", audience: IdentityTest.iosApp)), "alg none"),
                    ("HS256 keyed with the public key", try await idp.mintHS256WithPublicKey(idp.claims(subject: "x", audience: IdentityTest.iosApp)), "HS256"),
                    ("no kid", try await idp.mint(idp.claims(subject: "x", audience: IdentityTest.iosApp), key: .rsa, header: .init(omitKid: true)), "kid"),
                    ("RSA kid on an EC signature", try await idp.mint(idp.claims(subject: "x", audience: IdentityTest.iosApp), key: .ec, header: .init(kid: rsaKID)), "cannot verify"),
                    ("not a JWS", "not.a-token", "JWS"),
                    ("an access token", try await idp.mint(idp.claims(subject: "x", audience: IdentityTest.iosApp), key: .rsa, header: .init(typ: "at+jwt")), "access token"),
                    ("azp of another app", try await IdentityTest.token(idp, subject: "x") { $0["azp"] = .string("someone.else") }, "azp"),
                    ("several audiences, no azp", try await IdentityTest.token(idp, subject: "x") {
                        $0["aud"] = .strings([IdentityTest.iosApp, "someone.else"])
                    }, "azp"),
                    ("a kid of 4,000 characters", try await idp.mint(
                        idp.claims(subject: "x", audience: IdentityTest.iosApp), key: .rsa, header: .init(kid: String(repeating: "k\n", count: 2000))),
                        "no key with kid"),
                ]
                for (name, token, phrase) in cases {
                    let response = try await client.signIn(idToken: token, tenant: tenant)
                    #expect(response.status == .unauthorized, "\(name): \(response.body)")
                    #expect(response.code == "id_token_invalid", "\(name)")
                    #expect(response.detail?.contains(phrase) == true, "\(name): \(response.detail ?? "")")
                }
                #expect(try await IdentityTest.userCount(tenant: tenant) == 0)
                // Refusals quote the token's header only so far: printable, 64 characters at most.
                let long = try await client.signIn(idToken: cases.first { $0.0.hasPrefix("a kid of") }!.1, tenant: tenant)
                #expect((long.detail?.count ?? 0) < 200 && long.detail?.contains("\n") == false)
                // Several audiences with azp naming ours is fine.
                let shared = try await IdentityTest.token(idp, subject: "azp") {
                    $0["aud"] = .strings([IdentityTest.iosApp, "someone.else"])
                    $0["azp"] = .string(IdentityTest.iosApp)
                }
                #expect(try await client.signIn(idToken: shared, tenant: tenant).status == .created)
                // Within the 60 s of skew, both ES256 and RS256 pass. The clock read again here: the
                // requests above may take long on a loaded machine, and `now` would have aged.
                let later = IdentityTest.now
                let late = try await IdentityTest.token(idp, subject: "skew", key: .ec) { $0["exp"] = .number(later - 30); $0["iat"] = .number(later - 630) }
                #expect(try await client.signIn(idToken: late, tenant: tenant).status == .created)
            }
        }
    }

    @Test func aTokenIsGoodOnceAndRefusalsAreLoggedWithoutIt() async throws {
        try await IdentityTest.withProvider { idp in
            let tenant = try await TestEnvironment.makeTenant()
            try await IdentityTest.enable(tenant: tenant, provider: idp)
            let logs = CapturedLogs()
            let app = try await buildApplication(
                configuration: try TestEnvironment.configuration(IdentityTest.trusting(idp)), logger: logs.logger(level: .trace))
            let token = try await IdentityTest.token(idp, subject: "once")
            let expired = try await IdentityTest.token(idp, subject: "once") { $0["exp"] = .number(IdentityTest.now - 3600) }
            try await app.test(.router) { client in
                #expect(try await client.signIn(idToken: token, tenant: tenant).status == .created)
                let replay = try await client.signIn(idToken: token, tenant: tenant)
                #expect(replay.code == "id_token_invalid")
                #expect(replay.detail?.contains("already used") == true)
                // The same token with its signature re-encoded (padding; the unused low bits of
                // the last base64 character) still verifies, and is still the same token.
                let padded = token + "=="
                var lastBitsFlipped = token
                let last = lastBitsFlipped.removeLast()
                let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
                let index = alphabet.firstIndex(of: last)!
                lastBitsFlipped.append(alphabet[(index & ~3) | ((index + 1) & 3)])
                for variant in [padded, lastBitsFlipped] {
                    let again = try await client.signIn(idToken: variant, tenant: tenant)
                    #expect(again.code == "id_token_invalid" && again.detail?.contains("already used") == true, "\(again.body)")
                }
                #expect(try await client.signIn(idToken: expired, tenant: tenant).code == "id_token_invalid")
            }
            let refusals = logs.all.filter { $0.message == "ID token refused" }
            #expect(refusals.map { "\($0.metadata["reason"] ?? "")" }.contains { $0.contains("expired") })
            let everything = logs.all.map { "\($0.message) \($0.metadata)" }.joined(separator: "\n")
            #expect(!everything.contains(token) && !everything.contains(expired))
            #expect(!everything.contains(String(token.split(separator: ".")[2])))
        }
    }

    @Test func theNonceIsCheckedHashedOrRawAsTheProviderSays() async throws {
        try await IdentityTest.withProvider { idp in
            let hashedTenant = try await TestEnvironment.makeTenant()
            let rawTenant = try await TestEnvironment.makeTenant()
            let eitherTenant = try await TestEnvironment.makeTenant()
            try await IdentityTest.enable(tenant: hashedTenant, provider: idp, nonce: "hashed")
            try await IdentityTest.enable(tenant: rawTenant, provider: idp, nonce: "raw")
            try await IdentityTest.enable(tenant: eitherTenant, provider: idp, nonce: "either")
            try await withApp(IdentityTest.trusting(idp)) { client in
                let nonce = "n-\(UUID().uuidString)"
                let carryingHash = { try await IdentityTest.token(idp, subject: "n", nonce: IdentityTest.hashed(nonce)) }
                let carryingRaw = { try await IdentityTest.token(idp, subject: "n", nonce: nonce) }
                #expect(try await client.signIn(idToken: try await carryingHash(), nonce: nonce, tenant: hashedTenant).status == .created)
                #expect(try await client.signIn(idToken: try await carryingRaw(), nonce: nonce, tenant: hashedTenant).code == "id_token_invalid")
                #expect(try await client.signIn(idToken: try await carryingRaw(), nonce: nonce, tenant: rawTenant).status == .created)
                let hashedInRaw = try await client.signIn(idToken: try await carryingHash(), nonce: nonce, tenant: rawTenant)
                #expect(hashedInRaw.detail?.contains("nonce does not match") == true)
                let other = try await client.signIn(idToken: try await carryingHash(), nonce: "another", tenant: hashedTenant)
                #expect(other.detail?.contains("nonce does not match") == true)
                let none = try await client.signIn(idToken: try await IdentityTest.token(idp, subject: "n"), nonce: nonce, tenant: hashedTenant)
                #expect(none.detail?.contains("carries none") == true)
                #expect(try await client.signIn(idToken: try await carryingHash(), nonce: nonce, tenant: eitherTenant).status == .created)
                #expect(try await client.signIn(idToken: try await carryingRaw(), nonce: nonce, tenant: eitherTenant).status == .ok)
                let neither = try await client.signIn(idToken: try await carryingRaw(), nonce: "something else", tenant: eitherTenant)
                #expect(neither.detail?.contains("nonce does not match") == true)
            }
        }
    }

    @Test func aTakenUsernameNamesAFreeOneAndSpendsNothing() async throws {
        try await IdentityTest.withProvider { idp in
            let tenant = try await TestEnvironment.makeTenant()
            try await IdentityTest.enable(tenant: tenant, provider: idp)
            try await withApp(IdentityTest.trusting(idp)) { client in
                _ = try await client.signup("Marco", tenant: tenant)
                let token = try await IdentityTest.token(idp, subject: "polo")
                let taken = try await client.signIn(idToken: token, username: "marco", tenant: tenant)
                #expect(taken.status == .conflict && taken.code == "username_taken")
                let problem = try taken.problem()
                let suggestion = try #require(problem.detail.split(separator: " ").first { $0.hasPrefix("marco-") }).description
                #expect(problem.fields == ["username"])
                let bad = try await client.signIn(idToken: token, username: "no spaces allowed", tenant: tenant)
                #expect(bad.code == "validation_failed" && bad.errorFields == ["username"])
                // The same token again, with the suggestion: the refusal spent nothing.
                let created = try await client.signIn(idToken: token, username: suggestion, tenant: tenant)
                #expect(created.status == .created, "\(created.body)")
                #expect(try created.decode(API.TokenResponse.self).user.username == suggestion)
            }
        }
    }

    @Test func badRequestsAndProvidersTheTenantDoesNotAccept() async throws {
        try await IdentityTest.withProvider { idp in
            let tenant = try await TestEnvironment.makeTenant()
            try await IdentityTest.enable(tenant: tenant, provider: idp)
            try await withApp(IdentityTest.trusting(idp)) { client in
                let token = try await IdentityTest.token(idp, subject: "p")
                let google = try await client.signIn(idToken: token, provider: "google", tenant: tenant)
                #expect(google.code == "validation_failed" && google.errorFields == ["provider"])
                let nonsense = try await client.signIn(idToken: token, provider: "oidc:../../etc", tenant: tenant)
                #expect(nonsense.code == "validation_failed")
                let code = try await client.signIn(idToken: token, authorizationCode: "c", tenant: tenant)
                #expect(code.errorFields == ["authorization_code"])
                let wrongTypes = try await client.call(.post, "/v1/auth/id-token", json: ["provider": 1, "id_token": ["x"], "extra": true], tenant: tenant)
                #expect(Set(wrongTypes.errorFields) == ["provider", "id_token", "extra"])
                let noTenant = try await client.call(.post, "/v1/auth/id-token", json: ["provider": "oidc:test", "id_token": token])
                #expect(noTenant.code == "malformed_request")
                #expect(try await IdentityTest.userCount(tenant: tenant) == 0)

                // A disabled account is refused, with a fresh token too.
                let user = try await client.signedIn(idToken: try await IdentityTest.token(idp, subject: "d"), tenant: tenant)
                let username = try await client.me(user.token).username
                try await TestEnvironment.withOwnerPool { try await $0.query("SELECT admin.set_user_disabled(\(tenant), \(username), true)") }
                let disabled = try await client.signIn(idToken: try await IdentityTest.token(idp, subject: "d"), tenant: tenant)
                #expect(disabled.status == .forbidden)
            }
        }
    }

    @Test func operatorsCannotPointKeysAtPlainHTTPAndTheServiceRefusesLoopbackUnlessAllowed() async throws {
        try await IdentityTest.withProvider { idp in
            let tenant = try await TestEnvironment.makeTenant()
            let refused = { (issuer: String?, keysURL: String?) async throws -> String in
                do {
                    try await AdminCommands.setIdentityProvider(
                        tenant: tenant, provider: "oidc:corp", clientIDs: ["x"], issuer: issuer, keysURL: keysURL, nonce: nil,
                        configuration: try TestEnvironment.configuration(), logger: TestEnvironment.logger)
                    return "accepted"
                } catch {
                    return String(reflecting: error)
                }
            }
            #expect(try await refused("https://corp.example", "http://corp.example/keys").contains("identity_providers_jwks_uri"))
            #expect(try await refused(nil, nil).contains("identity_providers_oidc_endpoints"))
            #expect(try await refused("https://corp.example", "https://corp.example/keys") == "accepted")
            try await IdentityTest.enable(tenant: tenant, provider: idp)
            let fetchesBefore = idp.keysFetchCount
            try await withApp({ IdentityTest.trusting(idp)(&$0); $0.identity.allowLoopbackKeyURLs = false }) { client in
                let response = try await client.signIn(idToken: try await IdentityTest.token(idp, subject: "l"), tenant: tenant)
                #expect(response.status == .serviceUnavailable && response.code == "unavailable")
            }
            #expect(idp.keysFetchCount == fetchesBefore)
            let providers = try await AdminCommands.identityProviders(configuration: try TestEnvironment.configuration(), logger: TestEnvironment.logger)
            #expect(providers.first { $0.tenant == tenant && $0.provider == "oidc:test" }?.clientIDs == [IdentityTest.iosApp, IdentityTest.webApp])
        }
    }
}
