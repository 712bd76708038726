import Foundation
import HTTPTypes
import TestMailServer
import TestPolling
import Testing

@testable import LandmarkRemark

/// Verified emails through a real SMTP server on loopback: codes, links, changes, limits.
@Suite struct EmailVerificationTests {
    @Test func aSignupsEmailGetsACodeFromTheSenderAndTheCodeVerifiesIt() async throws {
        let rig = try await MailTestRig(appSender: true)
        try await withApp(rig.configure) { client in
            let ana = try await client.signup("ana", email: "ana@example.test", tenant: rig.tenant)
            let mail = try #require(try await rig.server.waitForMessages(to: "ana@example.test").first)
            #expect(mail.tls && mail.login == "sender" && mail.contentType == "multipart/alternative")
            #expect(mail.from == "Maps Café <noreply@maps.example>")
            #expect(mail.subject.hasSuffix("is your Test tenant verification code"))
            #expect(mail.text.contains("\(MailTestRig.linkBase)/t/\(rig.tenant)/links/verify#t=lr_ml_"))
            #expect(mail.html.contains(try MailTestRig.code(in: mail)))
            var me = try await client.call(.get, "/v1/me", token: ana.accessToken).decode(API.Me.self)
            #expect(me.email == "ana@example.test" && !me.emailVerified && me.pendingEmail == nil)

            let verified = try await client.call(.post, "/v1/me/email/verify", json: ["code": try MailTestRig.code(in: mail)], token: ana.accessToken)
            #expect(verified.status == .ok, "\(verified.body)")
            #expect(try verified.decode(API.EmailVerified.self).email == "ana@example.test")
            me = try await client.call(.get, "/v1/me", token: ana.accessToken).decode(API.Me.self)
            #expect(me.emailVerified)
            // Verified: nothing more to send.
            #expect(try await client.call(.post, "/v1/me/email/verification", token: ana.accessToken).code == "email_already_verified")
            #expect(try await rig.outbox().map(\.state) == ["sent"])
        }
    }

    @Test func theLinkVerifiesWithoutASignInAndAScannersGetOfItChangesNothing() async throws {
        let rig = try await MailTestRig(clock: TestClock())
        try await withApp({ rig.configure(&$0); $0.web.directory = WebAppTests.webDirectory }) { client in
            let bo = try await client.signup("bob", email: "bo@example.test", tenant: rig.tenant)
            try await rig.deliver()
            let mail = try #require(try await rig.server.waitForMessages(to: "bo@example.test").first)
            let token = try MailTestRig.linkToken(in: mail)
            // What a mail scanner can fetch: the page (the fragment never leaves a client), with
            // or without the token put into the query by a rewriting proxy.
            for path in ["/t/\(rig.tenant)/links/verify", "/t/\(rig.tenant)/links/verify?t=\(token)"] {
                let page = try await client.call(.get, path)
                #expect(page.status == .ok && page.headers[.contentType]?.hasPrefix("text/html") == true, "\(path): \(page.status)")
                #expect(page.headers[.referrerPolicy] == "no-referrer")
            }
            #expect(try await !client.call(.get, "/v1/me", token: bo.accessToken).decode(API.Me.self).emailVerified)
            // The page's one tap: no token, no tenant, only the link's token.
            let tapped = try await client.call(.post, "/v1/me/email/verify", json: ["token": token])
            #expect(tapped.status == .ok, "\(tapped.body)")
            #expect(try await client.call(.get, "/v1/me", token: bo.accessToken).decode(API.Me.self).emailVerified)
            #expect(try await client.call(.post, "/v1/me/email/verify", json: ["token": token]).code == "code_expired")
            // A made-up token of the right shape, and another tenant's id in it.
            #expect(try await client.call(.post, "/v1/me/email/verify", json: ["token": "lr_ml_\(rig.tenantID)_" + String(repeating: "A", count: 43)]).code == "invalid_code")
            #expect(try await client.call(.post, "/v1/me/email/verify", json: ["token": "nonsense"]).code == "validation_failed")
            #expect(try await client.call(.post, "/v1/me/email/verify", json: ["code": "123456"]).status == .unauthorized)
            #expect(try await client.call(.post, "/v1/me/email/verify", json: ["code": "12345x"], token: bo.accessToken).code == "validation_failed")
            #expect(try await client.call(.post, "/v1/me/email/verify", json: ["code": "123456", "token": token], token: bo.accessToken).code == "validation_failed")
        }
    }

    @Test func aNewEmailWaitsForItsCodeAndTheOldAddressIsTold() async throws {
        let rig = try await MailTestRig(clock: TestClock())
        try await withApp(rig.configure) { client in
            let cy = try await client.signup("cyd", email: "cy@example.test", tenant: rig.tenant)
            let other = try await client.signup("dee", email: "dee@example.test", tenant: rig.tenant)
            _ = other
            let changed = try await client.call(.patch, "/v1/me", json: ["email": "cy.new@example.test"], token: cy.accessToken)
            #expect(changed.status == .ok, "\(changed.body)")
            let me = try changed.decode(API.Me.self)
            #expect(me.email == "cy@example.test" && me.pendingEmail == "cy.new@example.test" && !me.emailVerified)
            // Another account's address is refused at once.
            #expect(try await client.call(.patch, "/v1/me", json: ["email": "DEE@example.test"], token: cy.accessToken).code == "email_taken")
            try await rig.deliver()
            // The signup's code was still unsent: the change's code replaced it, so the old
            // address gets the notice alone.
            let notice = try #require(try await rig.server.waitForMessages(to: "cy@example.test").last)
            #expect(notice.subject == "Your Test tenant email is being changed" && notice.text.contains("cy.new@example.test"))
            let code = try MailTestRig.code(in: try #require(try await rig.server.waitForMessages(to: "cy.new@example.test").first))
            #expect(try await client.call(.post, "/v1/me/email/verify", json: ["code": code], token: cy.accessToken).status == .ok)
            let after = try await client.call(.get, "/v1/me", token: cy.accessToken).decode(API.Me.self)
            #expect(after.email == "cy.new@example.test" && after.emailVerified && after.pendingEmail == nil)
            // The old address logs in no more; the new one does.
            #expect(try await client.call(.post, "/v1/auth/login", json: ["username": "cy.new@example.test", "password": cy.password], tenant: rig.tenant).status == .ok)
        }
    }

    @Test func fiveWrongCodesEndTheCodeAndSoDoFifteenMinutesAndANewerCode() async throws {
        let clock = TestClock()
        let rig = try await MailTestRig(clock: clock)
        try await withApp(rig.configure) { client in
            let ed = try await client.signup("eddie", email: "ed@example.test", tenant: rig.tenant)
            try await rig.deliver()
            let code = try MailTestRig.code(in: try #require(try await rig.server.waitForMessages(to: "ed@example.test").first))
            let wrong = code == "000000" ? "000001" : "000000"
            for _ in 0..<5 {
                #expect(try await client.call(.post, "/v1/me/email/verify", json: ["code": wrong], token: ed.accessToken).code == "invalid_code")
            }
            #expect(try await client.call(.post, "/v1/me/email/verify", json: ["code": code], token: ed.accessToken).code == "code_expired")

            // A new code; then a newer one retires it.
            #expect(try await client.call(.post, "/v1/me/email/verification", token: ed.accessToken).status == .accepted)
            try await rig.deliver()
            let second = try MailTestRig.code(in: try await rig.server.waitForMessages(to: "ed@example.test", count: 2)[1])
            #expect(try await client.call(.post, "/v1/me/email/verification", token: ed.accessToken).status == .accepted)
            try await rig.deliver()
            let third = try MailTestRig.code(in: try await rig.server.waitForMessages(to: "ed@example.test", count: 3)[2])
            if second != third {
                #expect(try await client.call(.post, "/v1/me/email/verify", json: ["code": second], token: ed.accessToken).code == "invalid_code")
            }
            // Fifteen minutes later the newest one is dead too.
            clock.advance(15 * 60)
            #expect(try await client.call(.post, "/v1/me/email/verify", json: ["code": third], token: ed.accessToken).code == "code_expired")
            #expect(try await !client.call(.get, "/v1/me", token: ed.accessToken).decode(API.Me.self).emailVerified)
            // Each was delivered before the next was asked for: none was replaced unsent.
            #expect(try await rig.outbox().map(\.state) == ["sent", "sent", "sent"])
        }
    }

    @Test func messagesPerAddressAreLimitedWithRetryAfter() async throws {
        let rig = try await MailTestRig(clock: TestClock())
        try await withApp(rig.configure) { client in
            let fay = try await client.signup("fay", email: "fay@example.test", tenant: rig.tenant)
            // The signup's message was the first of 3 in 15 minutes.
            for _ in 0..<2 { #expect(try await client.call(.post, "/v1/me/email/verification", token: fay.accessToken).status == .accepted) }
            let refused = try await client.call(.post, "/v1/me/email/verification", token: fay.accessToken)
            #expect(refused.status == .tooManyRequests && refused.code == "rate_limited")
            let wait = try #require(refused.headers[.retryAfter].flatMap { Int($0) })
            #expect((1...900).contains(wait))
            rig.clock!.advance(TimeInterval(wait))
            #expect(try await client.call(.post, "/v1/me/email/verification", token: fay.accessToken).status == .accepted)
        }
    }

    @Test func aTenantCanRequireAVerifiedEmailBeforePosting() async throws {
        let rig = try await MailTestRig(clock: TestClock())
        try await TestEnvironment.withOwnerPool { pool in
            try await pool.query("SELECT 1 FROM admin.set_tenant_setting(\(rig.tenant), 'email_verification_required', 'true')")
        }
        try await withApp(rig.configure) { client in
            let info = try await client.call(.get, "/v1/tenant", tenant: rig.tenant).decode(API.TenantInfo.self)
            #expect(info.emailVerificationRequired && info.passwordResetAvailable)
            let gil = try await client.signup("gil", email: "gil@example.test", tenant: rig.tenant)
            let note: [String: Any] = ["body": "hello", "lat": -33.86, "lng": 151.21]
            let refused = try await client.call(.post, "/v1/notes", json: note, token: gil.accessToken)
            #expect(refused.status == .forbidden && refused.code == "email_not_verified")
            try await rig.deliver()
            let code = try MailTestRig.code(in: try #require(try await rig.server.waitForMessages(to: "gil@example.test").first))
            #expect(try await client.call(.post, "/v1/me/email/verify", json: ["code": code], token: gil.accessToken).status == .ok)
            #expect(try await client.call(.post, "/v1/notes", json: note, token: gil.accessToken).status == .created)
        }
    }

    @Test func aTenantWithoutARelayAndAServiceWithoutADataKeyMailNothing() async throws {
        let plain = try await TestEnvironment.makeTenant()
        let rig = try await MailTestRig()
        try await withApp(rig.configure) { client in
            #expect(try await !client.call(.get, "/v1/tenant", tenant: plain).decode(API.TenantInfo.self).passwordResetAvailable)
            let hal = try await client.signup("hal", email: "hal@example.test", tenant: plain)
            #expect(try await client.call(.post, "/v1/me/email/verification", token: hal.accessToken).code == "mail_not_configured")
            // Without a relay an email changes at once, unverified.
            let me = try await client.call(.patch, "/v1/me", json: ["email": "hal2@example.test"], token: hal.accessToken).decode(API.Me.self)
            #expect(me.email == "hal2@example.test" && me.pendingEmail == nil)
        }
        try await withApp { client in
            #expect(try await !client.call(.get, "/v1/tenant", tenant: rig.tenant).decode(API.TenantInfo.self).passwordResetAvailable)
            let ivy = try await client.signup("ivy", email: "ivy@example.test", tenant: rig.tenant)
            #expect(try await client.call(.post, "/v1/me/email/verification", token: ivy.accessToken).code == "mail_not_configured")
        }
    }
}
