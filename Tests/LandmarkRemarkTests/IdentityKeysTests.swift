import Foundation
import HummingbirdTesting
import IdentityProviderFake
import LandmarkRemark
import Testing

/// The provider's keys: fetched once and kept per `Cache-Control`, fetched again for a key
/// never seen (once a minute at most), the last good set used while the provider is down.
/// Each test builds its own application, so each starts with an empty cache.
@Suite(.timeLimit(.minutes(10))) struct IdentityKeysTests {
    /// Without a clock to move, what is observable: a set is reused while its `Cache-Control`
    /// (or, when absent, the default hour) allows, and fetched again for every sign-in when
    /// the provider forbids caching.
    @Test func keysAreReusedWhileCacheControlAllowsAndFetchedAgainWhenItForbids() async throws {
        try await IdentityTest.withProvider { idp in
            let tenant = try await TestEnvironment.makeTenant()
            try await IdentityTest.enable(tenant: tenant, provider: idp)
            idp.setKeysCacheControl(nil)
            try await withApp(IdentityTest.trusting(idp)) { client in
                for subject in ["a", "b", "c"] {
                    _ = try await client.signedIn(idToken: try await IdentityTest.token(idp, subject: subject), tenant: tenant)
                }
                #expect(idp.keysFetchCount == 1)
            }
            idp.setKeysCacheControl("public, no-store")
            let before = idp.keysFetchCount
            try await withApp(IdentityTest.trusting(idp)) { client in
                for subject in ["d", "e", "f"] {
                    _ = try await client.signedIn(idToken: try await IdentityTest.token(idp, subject: subject), tenant: tenant)
                }
            }
            #expect(idp.keysFetchCount == before + 3)
        }
    }

    @Test func anUnknownKeyIsFetchedForOnceAMinuteAtMost() async throws {
        try await IdentityTest.withProvider { idp in
            let tenant = try await TestEnvironment.makeTenant()
            try await IdentityTest.enable(tenant: tenant, provider: idp)
            try await withApp(IdentityTest.trusting(idp)) { client in
                _ = try await client.signedIn(idToken: try await IdentityTest.token(idp, subject: "k"), tenant: tenant)
                #expect(idp.keysFetchCount == 1)
                let claims = idp.claims(subject: "k", audience: IdentityTest.iosApp)
                let unknown = try await client.signIn(idToken: try await idp.mint(claims, key: .rsa, header: .init(kid: "nope-1")), tenant: tenant)
                #expect(unknown.code == "id_token_invalid")
                #expect(unknown.detail?.contains("no key with kid nope-1") == true)
                #expect(idp.keysFetchCount == 2)
                // Another unknown key within the minute: refused from the cache, no fetch.
                let again = try await client.signIn(idToken: try await idp.mint(claims, key: .rsa, header: .init(kid: "nope-2")), tenant: tenant)
                #expect(again.code == "id_token_invalid")
                #expect(idp.keysFetchCount == 2)
            }
        }
    }

    @Test func rotatedKeysAreFetchedWhenATokenNamesOne() async throws {
        try await IdentityTest.withProvider { idp in
            let tenant = try await TestEnvironment.makeTenant()
            try await IdentityTest.enable(tenant: tenant, provider: idp)
            try await withApp(IdentityTest.trusting(idp)) { client in
                let first = try await client.signedIn(idToken: try await IdentityTest.token(idp, subject: "r"), tenant: tenant)
                let oldKID = idp.rsaKeyID
                idp.rotateKeys()
                #expect(idp.rsaKeyID != oldKID)
                let rotated = try await client.signedIn(idToken: try await IdentityTest.token(idp, subject: "r", key: .ec), tenant: tenant)
                #expect(rotated.userID == first.userID)
                #expect(idp.keysFetchCount == 2)
            }
        }
    }

    @Test func aDownProviderIsCoveredByTheLastGoodSetAndWithoutOneIs503() async throws {
        try await IdentityTest.withProvider { idp in
            let tenant = try await TestEnvironment.makeTenant()
            try await IdentityTest.enable(tenant: tenant, provider: idp)
            // Stale at once, so every sign-in tries the provider first.
            idp.setKeysCacheControl("max-age=0")
            try await withApp(IdentityTest.trusting(idp)) { client in
                _ = try await client.signedIn(idToken: try await IdentityTest.token(idp, subject: "up"), tenant: tenant)
                idp.setAvailable(false)
                let fetched = idp.keysFetchCount
                let whileDown = try await client.signIn(idToken: try await IdentityTest.token(idp, subject: "up"), tenant: tenant)
                #expect(whileDown.status == .ok, "\(whileDown.body)")
                #expect(idp.keysFetchCount == fetched + 1)
            }
            // A fresh process has nothing cached: the provider being down is a 503.
            try await withApp(IdentityTest.trusting(idp)) { client in
                let response = try await client.signIn(idToken: try await IdentityTest.token(idp, subject: "up"), tenant: tenant)
                #expect(response.status == .serviceUnavailable)
                #expect(response.code == "unavailable")
                #expect(response.headers[.retryAfter] != nil)
            }
        }
    }
}
