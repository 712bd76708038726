import Foundation
import HummingbirdTesting
import IdentityProviderFake
import LandmarkRemark
import Testing

/// `POST /v1/auth/guest`: accounts with nothing to sign in with again, limited per client
/// address, switched off per tenant, and upgraded in place keeping what they made.
@Suite(.timeLimit(.minutes(10))) struct GuestTests {
    private func startGuest(_ client: any TestClientProtocol, tenant: String) async throws -> API.TokenResponse {
        let response = try await client.call(.post, "/v1/auth/guest", tenant: tenant)
        #expect(response.status == .created, "\(response.body)")
        return try response.decode(API.TokenResponse.self)
    }

    @Test func aGuestBecomesAFullAccountBySettingAPasswordAndKeepsItsNotes() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let guest = try await startGuest(client, tenant: tenant)
            #expect(guest.user.username.hasPrefix("guest-"))
            var me = try await client.me(guest.accessToken)
            #expect(me.guest && !me.hasPassword && me.identities.isEmpty)
            let note = try await client.call(
                .post, "/v1/notes", json: ["body": "guest was here", "lat": 51.5, "lng": -0.12], token: guest.accessToken)
            #expect(note.status == .created)

            // A guest has nothing to confirm with: the new password alone.
            let upgraded = try await client.call(.patch, "/v1/me", json: ["password": ["new": "guest no more 42"]], token: guest.accessToken)
            #expect(upgraded.status == .ok, "\(upgraded.body)")
            me = try upgraded.decode(API.Me.self)
            #expect(!me.guest && me.hasPassword && me.noteCount == 1)
            let login = try await client.call(
                .post, "/v1/auth/login", json: ["username": guest.user.username, "password": "guest no more 42"], tenant: tenant)
            #expect(login.status == .ok)
            let notes = try await client.call(.get, "/v1/notes?author=me", token: try login.decode(API.TokenResponse.self).accessToken)
            #expect(try notes.decode(API.NotePage.self).items.map(\.body) == ["guest was here"])
        }
    }

    @Test func aGuestBecomesAFullAccountByLinkingAnIdentityAndIsDeletedWithoutConfirmation() async throws {
        try await IdentityTest.withProvider { idp in
            let tenant = try await TestEnvironment.makeTenant()
            try await IdentityTest.enable(tenant: tenant, provider: idp)
            try await withApp(IdentityTest.trusting(idp)) { client in
                let guest = try await startGuest(client, tenant: tenant)
                let linked = try await client.call(
                    .post, "/v1/me/identities",
                    json: ["provider": "oidc:test", "id_token": try await IdentityTest.token(idp, subject: "was-a-guest")], token: guest.accessToken)
                #expect(linked.status == .created)
                #expect(try linked.decode(API.Me.self).guest == false)
                let signedIn = try await client.signedIn(idToken: try await IdentityTest.token(idp, subject: "was-a-guest"), tenant: tenant)
                #expect(signedIn.userID == guest.user.id)

                // A guest that stayed one is deleted with `{}`: it has nothing to confirm with.
                let other = try await startGuest(client, tenant: tenant)
                #expect(try await client.call(.delete, "/v1/me", json: [:], token: other.accessToken).status == .noContent)
                // The upgraded one has an identity now, so `{}` is not enough.
                #expect(try await client.call(.delete, "/v1/me", json: [:], token: guest.accessToken).code == "validation_failed")
            }
        }
    }

    @Test func guestsAreLimitedPerAddressAndCanBeSwitchedOff() async throws {
        let other = try await TestEnvironment.makeTenant()
        try await withApp({ $0.identity.guestsPerAddressPerHour = 3 }) { client in
            // The limit counts in the clock's hours: three guests and a fourth in one of them.
            let (tenant, limited) = try await TestEnvironment.inOneClockHour { tenant in
                for _ in 0..<3 { _ = try await startGuest(client, tenant: tenant) }
                return try await client.call(.post, "/v1/auth/guest", tenant: tenant)
            }
            #expect(limited.status == .tooManyRequests && limited.code == "rate_limited")
            let retryAfter = try #require(limited.headers[.retryAfter].flatMap { Int($0) })
            #expect((1...3600).contains(retryAfter))
            #expect(try await IdentityTest.userCount(tenant: tenant) == 3)
            // Counted per tenant.
            _ = try await startGuest(client, tenant: other)

            try await AdminCommands.setTenantSetting(
                tenant: other, setting: "guests_enabled", value: "false", configuration: try TestEnvironment.configuration(),
                logger: TestEnvironment.logger)
            let off = try await client.call(.post, "/v1/auth/guest", tenant: other)
            #expect(off.status == .forbidden && off.code == "guests_disabled")
            #expect(try await client.call(.post, "/v1/auth/guest").code == "malformed_request")
            #expect(try await client.call(.post, "/v1/auth/guest", tenant: "no-such-tenant").code == "tenant_not_found")
        }
    }
}
