import Foundation
import HummingbirdTesting
import IdentityProviderFake
import JWTKit
import LandmarkRemark
import Testing

/// Sign-in methods of an account: linking and unlinking identities, confirming sensitive
/// changes with a fresh ID token, and Apple's tokens kept and revoked.
// The limit only catches a hang: with both cores busy beside the whole suite (stress-ng),
// five rounds of concurrent unlinks, each signing in and linking first, took over 2 minutes.
@Suite(.timeLimit(.minutes(10))) struct IdentityLinkingTests {
    @Test func linkingAndUnlinkingIdentities() async throws {
        try await IdentityTest.withProvider { idp in
            let tenant = try await TestEnvironment.makeTenant()
            try await IdentityTest.enable(tenant: tenant, provider: idp)
            try await IdentityTest.enable("google", tenant: tenant, provider: idp, clientIDs: ["web.apps.googleusercontent.test"])
            try await withApp(IdentityTest.trusting(idp)) { client in
                let alice = try await client.signup("alice", tenant: tenant)
                let confirmed = ["password": alice.password]
                let link = { (subject: String) in
                    try await client.call(
                        .post, "/v1/me/identities",
                        json: ["provider": "oidc:test", "id_token": try await IdentityTest.token(idp, subject: subject), "confirm": confirmed],
                        token: alice.accessToken)
                }
                // A stolen access token alone cannot add a way in: linking is confirmed.
                let unconfirmed = try await client.call(
                    .post, "/v1/me/identities",
                    json: ["provider": "oidc:test", "id_token": try await IdentityTest.token(idp, subject: "alice-at-idp")], token: alice.accessToken)
                #expect(unconfirmed.code == "validation_failed")
                let wrongPassword = try await client.call(
                    .post, "/v1/me/identities",
                    json: ["provider": "oidc:test", "id_token": try await IdentityTest.token(idp, subject: "alice-at-idp"),
                           "confirm": ["password": "not her password"]], token: alice.accessToken)
                #expect(wrongPassword.code == "invalid_credentials")
                #expect(try await client.me(alice.accessToken).identities.isEmpty)
                let linked = try await link("alice-at-idp")
                #expect(linked.status == .created, "\(linked.body)")
                #expect(try linked.decode(API.Me.self).identities.map(\.provider) == ["oidc:test"])
                #expect(try await link("alice-at-idp").status == .ok)
                #expect(try await link("someone-else").code == "identity_already_linked")

                // The identity signs in to alice's account now.
                let viaIdentity = try await client.signedIn(idToken: try await IdentityTest.token(idp, subject: "alice-at-idp"), tenant: tenant)
                #expect(viaIdentity.userID == alice.userID)

                // Bob cannot take it.
                let bob = try await client.signup("bob", tenant: tenant)
                let stolen = try await client.call(
                    .post, "/v1/me/identities",
                    json: ["provider": "oidc:test", "id_token": try await IdentityTest.token(idp, subject: "alice-at-idp"),
                           "confirm": ["password": bob.password]], token: bob.accessToken)
                #expect(stolen.status == .conflict && stolen.code == "identity_taken")

                // Google's other issuer spelling counts too.
                let google = try await client.call(
                    .post, "/v1/me/identities",
                    json: ["provider": "google", "id_token": try await IdentityTest.token(idp, subject: "g-1", audience: "web.apps.googleusercontent.test") {
                        $0["iss"] = .string("accounts.fake.test")
                    }, "confirm": confirmed], token: alice.accessToken)
                #expect(google.status == .created, "\(google.body)")
                #expect(try google.decode(API.Me.self).identities.map(\.provider) == ["google", "oidc:test"])

                let unlink = { (provider: String, json: [String: Any]) in
                    try await client.call(.delete, "/v1/me/identities/\(provider)", json: json, token: alice.accessToken)
                }
                #expect(try await unlink("oidc:test", [:]).code == "validation_failed")
                #expect(try await unlink("oidc:test", confirmed).status == .noContent)
                #expect(try await unlink("oidc:test", confirmed).code == "not_found")
                #expect(try await unlink("bogus", confirmed).code == "not_found")
                // Unlinked: the identity is a stranger again, and makes a new account.
                let fresh = try await client.signIn(idToken: try await IdentityTest.token(idp, subject: "alice-at-idp"), tenant: tenant)
                #expect(fresh.status == .created)
                #expect(try fresh.decode(API.TokenResponse.self).user.id != alice.userID)
            }
        }
    }

    @Test func theLastWayToSignInCannotBeRemoved() async throws {
        try await IdentityTest.withProvider { idp in
            let tenant = try await TestEnvironment.makeTenant()
            try await IdentityTest.enable(tenant: tenant, provider: idp)
            try await IdentityTest.enable("google", tenant: tenant, provider: idp, clientIDs: [IdentityTest.webApp])
            try await withApp(IdentityTest.trusting(idp)) { client in
                let user = try await client.signedIn(idToken: try await IdentityTest.token(idp, subject: "only"), tenant: tenant)
                // Confirmed by a fresh token of an identity the account has.
                let fresh = { (provider: String, subject: String, audience: String) async throws -> [String: Any] in
                    ["provider": provider, "id_token": try await IdentityTest.token(idp, subject: subject, audience: audience)]
                }
                let unlink = { (provider: String, json: [String: Any]) in
                    try await client.call(.delete, "/v1/me/identities/\(provider)", json: json, token: user.token)
                }
                let last = try await unlink("oidc:test", try await fresh("oidc:test", "only", IdentityTest.iosApp))
                #expect(last.status == .conflict && last.code == "last_sign_in_method")
                // A token of someone else's identity confirms nothing.
                _ = try await client.signedIn(idToken: try await IdentityTest.token(idp, subject: "stranger"), tenant: tenant)
                var linkBody = try await fresh("google", "g", IdentityTest.webApp)
                linkBody["confirm"] = try await fresh("oidc:test", "stranger", IdentityTest.iosApp)
                let strangers = try await client.call(.post, "/v1/me/identities", json: linkBody, token: user.token)
                #expect(strangers.code == "id_token_invalid" && strangers.detail?.contains("not one of this account") == true)
                linkBody = try await fresh("google", "g", IdentityTest.webApp)
                linkBody["confirm"] = try await fresh("oidc:test", "only", IdentityTest.iosApp)
                let google = try await client.call(.post, "/v1/me/identities", json: linkBody, token: user.token)
                #expect(google.status == .created, "\(google.body)")
                #expect(try await unlink("oidc:test", try await fresh("google", "g", IdentityTest.webApp)).status == .noContent)
                #expect(try await unlink("google", try await fresh("google", "g", IdentityTest.webApp)).code == "last_sign_in_method")
                #expect(try await client.me(user.token).identities.map(\.provider) == ["google"])
            }
        }
    }

    @Test func anAccountWithoutAPasswordIsDeletedWithAFreshIDToken() async throws {
        try await IdentityTest.withProvider { idp in
            let tenant = try await TestEnvironment.makeTenant()
            try await IdentityTest.enable(tenant: tenant, provider: idp)
            try await withApp(IdentityTest.trusting(idp)) { client in
                let user = try await client.signedIn(idToken: try await IdentityTest.token(idp, subject: "leaving"), tenant: tenant)
                let other = try await client.signedIn(idToken: try await IdentityTest.token(idp, subject: "staying"), tenant: tenant)
                let delete = { (json: [String: Any]) in try await client.call(.delete, "/v1/me", json: json, token: user.token) }

                let unconfirmed = try await delete([:])
                #expect(unconfirmed.code == "validation_failed")
                let now = IdentityTest.now
                let stale = try await IdentityTest.token(idp, subject: "leaving") { $0["iat"] = .number(now - 400) }
                #expect(try await delete(["provider": "oidc:test", "id_token": stale]).detail?.contains("5 minutes") == true)
                let someoneElses = try await IdentityTest.token(idp, subject: "staying")
                #expect(try await delete(["provider": "oidc:test", "id_token": someoneElses]).detail?.contains("not one of this account") == true)
                #expect(try await client.call(.get, "/v1/me", token: user.token).status == .ok)

                let fresh = try await IdentityTest.token(idp, subject: "leaving")
                #expect(try await delete(["provider": "oidc:test", "id_token": fresh]).status == .noContent)
                #expect(try await client.call(.get, "/v1/me", token: user.token).code == "unauthenticated")
                #expect(try await client.call(.get, "/v1/me", token: other.token).status == .ok)
                // The identity went with the account: signing in again starts afresh.
                #expect(try await client.signIn(idToken: try await IdentityTest.token(idp, subject: "leaving"), tenant: tenant).status == .created)
            }
        }
    }

    @Test func aPasswordlessAccountSetsAFirstPasswordWithAFreshIDToken() async throws {
        try await IdentityTest.withProvider { idp in
            let tenant = try await TestEnvironment.makeTenant()
            try await IdentityTest.enable(tenant: tenant, provider: idp)
            try await withApp(IdentityTest.trusting(idp)) { client in
                let user = try await client.signedIn(idToken: try await IdentityTest.token(idp, subject: "pw", email: "pat@example.org"), tenant: tenant)
                let password = "a first passphrase"
                let bare = try await client.call(.patch, "/v1/me", json: ["password": ["new": password]], token: user.token)
                #expect(bare.code == "validation_failed")
                let confirmed = try await client.call(
                    .patch, "/v1/me",
                    json: ["password": ["new": password], "provider": "oidc:test", "id_token": try await IdentityTest.token(idp, subject: "pw")],
                    token: user.token)
                #expect(confirmed.status == .ok, "\(confirmed.body)")
                #expect(try confirmed.decode(API.Me.self).hasPassword)
                let username = try confirmed.decode(API.Me.self).username
                let login = try await client.call(.post, "/v1/auth/login", json: ["username": username, "password": password], tenant: tenant)
                #expect(login.status == .ok, "\(login.body)")
                // Now it has a password, a change needs it (or a fresh token), as for anyone.
                let unconfirmed = try await client.call(.patch, "/v1/me", json: ["password": ["new": "another passphrase"]], token: user.token)
                #expect(unconfirmed.code == "validation_failed")
            }
        }
    }

    /// Sign in with Apple: the authorization code is exchanged with the tenant's key, the
    /// refresh token kept sealed, and revoked at Apple when the account is deleted.
    @Test func appleTokensAreKeptSealedAndRevokedWhenTheAccountGoes() async throws {
        try await IdentityTest.withProvider { idp in
            let tenant = try await TestEnvironment.makeTenant()
            #expect(try await IdentityTest.enableApple(tenant: tenant, provider: idp))
            try await withApp(IdentityTest.trusting(idp)) { client in
                let nonce = UUID().uuidString
                let code = idp.issueAuthorizationCode(subject: "apple-user")
                let response = try await client.signIn(
                    idToken: try await IdentityTest.token(idp, subject: "apple-user", nonce: IdentityTest.hashed(nonce)),
                    provider: "apple", nonce: nonce, username: "Jane", authorizationCode: code, tenant: tenant)
                #expect(response.status == .created, "\(response.body)")
                let account = try response.decode(API.TokenResponse.self)
                #expect(account.user.username == "Jane")
                #expect(idp.tokenRequests.count == 1)
                #expect(idp.tokenRequests.first?["client_id"] == "dev.landmark.ios")
                let refreshToken = try #require(idp.issuedRefreshTokens.first)
                let stored = try await TestEnvironment.withOwnerPool { pool in
                    try await pool.query("""
                        SELECT encode(apple_refresh_token, 'escape') FROM user_identities i JOIN tenants t ON t.id = i.tenant_id
                        WHERE t.slug = \(tenant) AND i.subject = 'apple-user'
                        """)[0].decode(String?.self, column: 0)
                }
                #expect(stored != nil && stored?.contains(refreshToken) == false)

                let delete = try await client.call(
                    .delete, "/v1/me",
                    json: ["provider": "apple", "id_token": try await IdentityTest.token(idp, subject: "apple-user")], token: account.accessToken)
                #expect(delete.status == .noContent, "\(delete.body)")
                #expect(idp.revocations == [Revocation(clientID: "dev.landmark.ios", token: refreshToken, tokenTypeHint: "refresh_token")])
            }
        }
    }

    @Test func unlinkingAppleRevokesItsTokenAndABadCodeDoesNotStopSignIn() async throws {
        try await IdentityTest.withProvider { idp in
            let tenant = try await TestEnvironment.makeTenant()
            #expect(try await IdentityTest.enableApple(tenant: tenant, provider: idp))
            try await withApp(IdentityTest.trusting(idp)) { client in
                // A code Apple never issued: the exchange fails, sign-in still works, nothing is kept.
                let bad = try await client.signIn(
                    idToken: try await IdentityTest.token(idp, subject: "a2"), provider: "apple", authorizationCode: "forged", tenant: tenant)
                #expect(bad.status == .created)
                #expect(idp.issuedRefreshTokens.isEmpty)
                let user = try await client.signup("withpassword", tenant: tenant)
                let linked = try await client.call(
                    .post, "/v1/me/identities",
                    json: ["provider": "apple", "id_token": try await IdentityTest.token(idp, subject: "a3"),
                           "authorization_code": idp.issueAuthorizationCode(subject: "a3"), "confirm": ["password": user.password]],
                    token: user.accessToken)
                #expect(linked.status == .created, "\(linked.body)")
                let refreshToken = try #require(idp.issuedRefreshTokens.first)
                let unlinked = try await client.call(.delete, "/v1/me/identities/apple", json: ["password": user.password], token: user.accessToken)
                #expect(unlinked.status == .noContent)
                #expect(idp.revocations.map(\.token) == [refreshToken])
            }
        }
    }

    /// Two unlinks at once on an account with two identities and no password: one goes, the
    /// other is refused as the last way in; never both.
    @Test func concurrentUnlinksLeaveAWayIn() async throws {
        try await IdentityTest.withProvider { idp in
            let tenant = try await TestEnvironment.makeTenant()
            try await IdentityTest.enable(tenant: tenant, provider: idp)
            try await IdentityTest.enable("google", tenant: tenant, provider: idp, clientIDs: [IdentityTest.webApp])
            try await withApp(IdentityTest.trusting(idp)) { client in
                for round in 0..<5 {
                    let user = try await client.signedIn(idToken: try await IdentityTest.token(idp, subject: "two-\(round)"), tenant: tenant)
                    let link = try await client.call(
                        .post, "/v1/me/identities",
                        json: ["provider": "google", "id_token": try await IdentityTest.token(idp, subject: "g-\(round)", audience: IdentityTest.webApp),
                               "confirm": ["provider": "oidc:test", "id_token": try await IdentityTest.token(idp, subject: "two-\(round)")]],
                        token: user.token)
                    #expect(link.status == .created)
                    let bodies: [(String, [String: Any])] = [
                        ("oidc:test", ["provider": "oidc:test", "id_token": try await IdentityTest.token(idp, subject: "two-\(round)")]),
                        ("google", ["provider": "google", "id_token": try await IdentityTest.token(idp, subject: "g-\(round)", audience: IdentityTest.webApp)]),
                    ]
                    let codes = try await withThrowingTaskGroup(of: Int.self) { group in
                        for (provider, body) in bodies {
                            nonisolated(unsafe) let body = body
                            group.addTask {
                                try await client.call(.delete, "/v1/me/identities/\(provider)", json: body, token: user.token).status.code
                            }
                        }
                        return try await group.reduce(into: []) { $0.append($1) }
                    }
                    #expect(codes.sorted() == [204, 409], "round \(round): \(codes)")
                    #expect(try await client.me(user.token).identities.count == 1)
                }
            }
        }
    }

    /// A refused sign-in (a taken username) leaves Apple's one-time code unspent: the retry
    /// with the suggested name exchanges it, and the account can be revoked at Apple later.
    @Test func aRefusedSignInLeavesAppleCodeUnspent() async throws {
        try await IdentityTest.withProvider { idp in
            let tenant = try await TestEnvironment.makeTenant()
            #expect(try await IdentityTest.enableApple(tenant: tenant, provider: idp))
            try await withApp(IdentityTest.trusting(idp)) { client in
                _ = try await client.signup("Jane", tenant: tenant)
                let token = try await IdentityTest.token(idp, subject: "jane-at-apple")
                let code = idp.issueAuthorizationCode(subject: "jane-at-apple")
                let taken = try await client.signIn(idToken: token, provider: "apple", username: "jane", authorizationCode: code, tenant: tenant)
                #expect(taken.code == "username_taken")
                #expect(idp.tokenRequests.isEmpty)
                let created = try await client.signIn(idToken: token, provider: "apple", username: "jane-a", authorizationCode: code, tenant: tenant)
                #expect(created.status == .created, "\(created.body)")
                #expect(idp.issuedRefreshTokens.count == 1)
                // A replay of the token does not reach Apple again.
                let replay = try await client.signIn(idToken: token, provider: "apple", authorizationCode: code, tenant: tenant)
                #expect(replay.code == "id_token_invalid")
                #expect(idp.tokenRequests.count == 1)
            }
        }
    }
}
