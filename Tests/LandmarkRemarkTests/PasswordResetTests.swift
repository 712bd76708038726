import Foundation
import HTTPTypes
import HummingbirdTesting
import TestMailServer
import TestPolling
import Testing

@testable import LandmarkRemark

/// Password reset through a real SMTP server on loopback: the message, the code and the link,
/// sessions ending, and answers that never tell who has an account.
@Suite struct PasswordResetTests {
    /// Signs up `name` with `email` and verifies it with the code the signup mailed.
    static func verifiedAccount(_ name: String, email: String, rig: MailTestRig, client: any TestClientProtocol) async throws -> Account {
        let account = try await client.signup(name, email: email, tenant: rig.tenant)
        if !rig.appSender { try await rig.deliver() }
        let code = try MailTestRig.code(in: try #require(try await rig.server.waitForMessages(to: email).last))
        let verified = try await client.call(.post, "/v1/me/email/verify", json: ["code": code], token: account.accessToken)
        #expect(verified.status == .ok, "\(verified.body)")
        return account
    }

    @Test func aResetFromRequestToNewPasswordEndsEverySessionAndTellsTheOwner() async throws {
        let rig = try await MailTestRig(appSender: true)
        try await withApp(rig.configure) { client in
            let ana = try await Self.verifiedAccount("anna", email: "anna@example.test", rig: rig, client: client)
            let other = try await client.call(.post, "/v1/auth/login", json: ["username": "anna", "password": ana.password], tenant: rig.tenant)
            let otherTokens = try other.decode(API.TokenResponse.self)

            let asked = try await client.call(.post, "/v1/auth/password/forgot", json: ["login": "ANNA@example.test"], tenant: rig.tenant)
            #expect(asked.status == .accepted && asked.body.contains("\"status\":\"requested\""))
            let mail = try await rig.server.waitForMessages(to: "anna@example.test", count: 2)[1]
            #expect(mail.subject.hasSuffix("is your Test tenant password reset code"))
            #expect(mail.text.contains("\(MailTestRig.linkBase)/t/\(rig.tenant)/links/reset#t=lr_ml_"))
            let code = try MailTestRig.code(in: mail)

            // The new password follows the tenant's rules; a refusal does not use the code up.
            let weak = try await client.call(.post, "/v1/auth/password/reset", json: ["login": "anna", "code": code, "new_password": "anna"], tenant: rig.tenant)
            #expect(weak.code == "validation_failed" && weak.errorFields == ["new_password"])
            let reset = try await client.call(
                .post, "/v1/auth/password/reset", json: ["login": "anna", "code": code, "new_password": "a brand new passphrase"], tenant: rig.tenant)
            #expect(reset.status == .ok, "\(reset.body)")
            let fresh = try reset.decode(API.TokenResponse.self)
            #expect(fresh.user.username == "anna")
            // Every earlier session ended; the new one works; so does the new password, not the old.
            #expect(try await client.call(.get, "/v1/me", token: ana.accessToken).status == .unauthorized)
            #expect(try await client.call(.get, "/v1/me", token: otherTokens.accessToken).status == .unauthorized)
            #expect(try await client.call(.post, "/v1/auth/refresh", json: ["refresh_token": otherTokens.refreshToken], tenant: rig.tenant).status == .unauthorized)
            #expect(try await client.call(.get, "/v1/me", token: fresh.accessToken).status == .ok)
            #expect(try await client.call(.post, "/v1/auth/login", json: ["username": "anna", "password": ana.password], tenant: rig.tenant).status == .unauthorized)
            #expect(try await client.call(.post, "/v1/auth/login", json: ["username": "anna", "password": "a brand new passphrase"], tenant: rig.tenant).status == .ok)
            // The code is spent, and the owner hears of the change.
            #expect(try await client.call(
                .post, "/v1/auth/password/reset", json: ["login": "anna", "code": code, "new_password": "yet another passphrase"], tenant: rig.tenant
            ).code == "code_expired")
            let noticed = try await eventually { try await rig.outbox().count == 3 }
            let rows = try await rig.outbox()
            #expect(noticed, "\(rows)")
            // Found by its subject, not its place: delivery is at least once, and under load (curl's
            // timeout passing after the relay stored the reset code) the code came twice before it.
            let notified = try await eventually {
                try rig.server.messages().contains { $0.recipients == ["anna@example.test"] && $0.subject == "Your Test tenant password was changed" }
            }
            let subjects = try rig.server.messages().map(\.subject)
            #expect(notified, "\(subjects)")
        }
    }

    @Test func theLinkResetsWithoutATenantAndAScannersGetChangesNothing() async throws {
        let rig = try await MailTestRig(clock: TestClock())
        try await withApp({ rig.configure(&$0); $0.web.directory = WebAppTests.webDirectory }) { client in
            let bea = try await Self.verifiedAccount("bea", email: "bea@example.test", rig: rig, client: client)
            #expect(try await client.call(.post, "/v1/auth/password/forgot", json: ["login": "bea"], tenant: rig.tenant).status == .accepted)
            #expect(try await eventually { try await rig.outbox().count == 2 })
            try await rig.deliver()
            let token = try MailTestRig.linkToken(in: try await rig.server.waitForMessages(to: "bea@example.test", count: 2)[1])
            let page = try await client.call(.get, "/t/\(rig.tenant)/links/reset?t=\(token)")
            #expect(page.status == .ok && page.headers[.referrerPolicy] == "no-referrer" && page.headers[.cacheControl] == "no-store")
            #expect(try await client.call(.get, "/v1/me", token: bea.accessToken).status == .ok)
            // Another tenant named beside the link is refused; the link alone works.
            let elsewhere = try await TestEnvironment.makeTenant()
            #expect(try await client.call(.post, "/v1/auth/password/reset", json: ["token": token, "new_password": "the link's passphrase"], tenant: elsewhere).code == "tenant_mismatch")
            let reset = try await client.call(.post, "/v1/auth/password/reset", json: ["token": token, "new_password": "the link's passphrase"])
            #expect(reset.status == .ok, "\(reset.body)")
            #expect(try await client.call(.get, "/v1/me", token: bea.accessToken).status == .unauthorized)
            #expect(try await client.call(.post, "/v1/auth/password/reset", json: ["token": token, "new_password": "again and again"]).code == "code_expired")
            // Thirty minutes is the link's life: a new one, then time passes.
            #expect(try await client.call(.post, "/v1/auth/password/forgot", json: ["login": "bea"], tenant: rig.tenant).status == .accepted)
            #expect(try await eventually { try await rig.outbox().filter { $0.kind == "password_reset" }.count == 2 })
            try await rig.deliver()
            let late = try MailTestRig.linkToken(in: try await rig.server.waitForMessages(to: "bea@example.test", count: 4).last!)
            rig.clock!.advance(30 * 60)
            #expect(try await client.call(.post, "/v1/auth/password/reset", json: ["token": late, "new_password": "too late for this"]).code == "code_expired")
        }
    }

    @Test func theMessageIsInTheUsersLanguageWhenTheTenantHasItAndForgotIsLimitedPerAddress() async throws {
        let rig = try await MailTestRig(clock: TestClock())
        try await TestEnvironment.withOwnerPool { pool in
            try await pool.query("""
                INSERT INTO mail_templates (tenant_id, kind, language, subject, text_body, html_body)
                VALUES (\(rig.tenantID), 'password_reset', 'fr', '{{code}} : votre code {{tenant}}',
                        'Bonjour {{username}}, votre code est {{code}} ({{minutes}} minutes). {{link}}',
                        '<p>Bonjour {{username}}, votre code est <b>{{code}}</b>.</p>')
                """)
        }
        try await withApp({ rig.configure(&$0); $0.mail.perAddress = 4 }) { client in
            _ = try await Self.verifiedAccount("jules", email: "jules@example.test", rig: rig, client: client)
            let french: HTTPFields = [.acceptLanguage: "fr-CA, fr;q=0.9, en;q=0.5"]
            let asked = try await client.call(.post, "/v1/auth/password/forgot", json: ["login": "jules"], tenant: rig.tenant, headers: french)
            #expect(asked.status == .accepted)
            #expect(try await eventually { try await rig.outbox().count == 2 })
            try await rig.deliver()
            let mail = try await rig.server.waitForMessages(to: "jules@example.test", count: 2)[1]
            let code = try MailTestRig.code(in: mail)
            #expect(mail.subject == "\(code) : votre code Test tenant")
            #expect(mail.text.contains("Bonjour jules") && mail.text.contains("\(MailTestRig.linkBase)/t/\(rig.tenant)/links/reset#t="))
            // A language the tenant has no template for gets the built-in English.
            #expect(try await client.call(.post, "/v1/auth/password/forgot", json: ["login": "jules"], tenant: rig.tenant,
                                          headers: [.acceptLanguage: "ja"]).status == .accepted)
            #expect(try await eventually { try await rig.outbox().count == 3 })
            try await rig.deliver()
            #expect(try await rig.server.waitForMessages(to: "jules@example.test", count: 3)[2].subject.hasSuffix("password reset code"))
            // The client address's limit (4 here: the verification's request was not counted,
            // the two above were): the fifth and later are 429, whatever the login.
            for login in ["nobody", "jules"] {
                _ = try await client.call(.post, "/v1/auth/password/forgot", json: ["login": login], tenant: rig.tenant)
            }
            let refused = try await client.call(.post, "/v1/auth/password/forgot", json: ["login": "someone"], tenant: rig.tenant)
            #expect(refused.status == .tooManyRequests && refused.code == "rate_limited" && refused.headers[.retryAfter] != nil)
        }
    }

    @Test func wrongCodesAreCountedAndAnUnknownLoginIsAWrongCode() async throws {
        let rig = try await MailTestRig(clock: TestClock())
        try await withApp(rig.configure) { client in
            _ = try await Self.verifiedAccount("dan", email: "dan@example.test", rig: rig, client: client)
            #expect(try await client.call(.post, "/v1/auth/password/forgot", json: ["login": "dan"], tenant: rig.tenant).status == .accepted)
            #expect(try await eventually { try await rig.outbox().count == 2 })
            try await rig.deliver()
            let code = try MailTestRig.code(in: try await rig.server.waitForMessages(to: "dan@example.test", count: 2)[1])
            let wrong = code == "999999" ? "999998" : "999999"
            func attempt(_ login: String, _ code: String) async throws -> String? {
                try await client.call(.post, "/v1/auth/password/reset", json: ["login": login, "code": code, "new_password": "new and long enough"], tenant: rig.tenant).code
            }
            #expect(try await attempt("nobody", code) == "invalid_code")
            for _ in 0..<5 { #expect(try await attempt("dan", wrong) == "invalid_code") }
            #expect(try await attempt("dan", code) == "code_expired")
            // Bad input: wrong types, both proofs, no tenant with a code, huge values.
            #expect(try await client.call(.post, "/v1/auth/password/reset", json: ["login": "dan", "code": 123456, "new_password": "x"], tenant: rig.tenant).code == "validation_failed")
            #expect(try await client.call(.post, "/v1/auth/password/reset", json: ["login": "dan", "code": code, "token": "lr_ml_1_x", "new_password": "long enough passphrase"], tenant: rig.tenant).code == "validation_failed")
            #expect(try await client.call(.post, "/v1/auth/password/reset", json: ["login": "dan", "code": code, "new_password": "long enough passphrase"]).status == .badRequest)
            #expect(try await client.call(.post, "/v1/auth/password/forgot", json: ["login": String(repeating: "é", count: 300)], tenant: rig.tenant).code == "validation_failed")
            #expect(try await client.call(.post, "/v1/auth/password/forgot", json: ["login": "dan%' OR 1=1 --"], tenant: rig.tenant).status == .accepted)
        }
    }
}

/// Whether an account exists must not show in `forgot`'s answer nor in its time. A suite of its
/// own, run alone after the rest (`scripts/test.sh`'s latency suites): beside the whole suite a
/// 2-core machine's bursts made one median 2.5 times another's.
@Suite struct ResetEnumerationTests {
    @Test func noAnswerTellsWhoHasAnAccountNorHowLongItTook() async throws {
        // On a clock of its own that stands still: the mail limits' 15-minute windows are fixed
        // to the clock, and a run that crossed a boundary of the real one (as the slow run under
        // stress-ng did at 05:45) let a third reset through. It stands at the real time, not
        // years ahead: this test runs the app's sender, which takes every tenant's due mail, and
        // on a clock years ahead it found other suites' mail expired and dropped it.
        let rig = try await MailTestRig(clock: TestClock(yearsAhead: 0), appSender: true)
        try await withApp({ rig.configure(&$0); $0.mail.perAddress = 10_000 }) { client in
            _ = try await PasswordResetTests.verifiedAccount("cora", email: "cora@example.test", rig: rig, client: client)
            _ = try await client.signup("dora", email: "dora@example.test", tenant: rig.tenant)  // unverified
            let logins = ["cora", "nobody-here", "dora"]
            var bodies: Set<String> = []
            // One measurement: 20 rounds of the three, in alternating order.
            func measure() async throws -> (fastest: [String: Duration], quartile: [String: Duration]) {
                var times: [String: [Duration]] = [:]
                for round in 0..<20 {
                    for login in (round % 2 == 0 ? logins : logins.reversed()) {
                        let started = ContinuousClock.now
                        let response = try await client.call(.post, "/v1/auth/password/forgot", json: ["login": login], tenant: rig.tenant)
                        times[login, default: []].append(ContinuousClock.now - started)
                        #expect(response.status == .accepted)
                        bodies.insert(response.body.replacing(#/"request_id":"[0-9a-f]+"/#, with: ""))
                    }
                }
                return (times.mapValues { $0.min()! }, times.mapValues { $0.sorted()[5] })
            }
            // The same work on every path. Load only ever adds time, so the fastest of 20 tries and
            // the lower quartile are what a busy machine leaves comparable: the fastest within
            // 1.5 x, the quartile within 2 x (each plus a millisecond or two of timer noise).
            // Medians differed up to 2.5 x beside other suites, which is the machine, not the path.
            // Under stress-ng on both cores even the fastest of 20 came out 4.7 ms against 2.1
            // (session 27), so a measurement that misses is taken again, up to three in all: a
            // path that costs more misses every time, the machine's bursts do not.
            var measured: [(fastest: [String: Duration], quartile: [String: Duration])] = []
            func comparable(_ m: (fastest: [String: Duration], quartile: [String: Duration])) -> Bool {
                m.fastest.values.max()! <= m.fastest.values.min()! * 1.5 + .milliseconds(1)
                    && m.quartile.values.max()! <= m.quartile.values.min()! * 2 + .milliseconds(2)
            }
            repeat {
                measured.append(try await measure())
            } while !comparable(measured.last!) && measured.count < 3
            #expect(bodies.count == 1, "\(bodies)")
            #expect(comparable(measured.last!), "fastest and lower quartiles of each measurement: \(measured)")
            // Only the verified account got mail: 2 resets, as its verification code took the
            // first of its 3 messages per 15 minutes. (A reset still unsent when the next came
            // was replaced by it.)
            #expect(try await eventually { try await rig.outbox().filter { $0.kind == "password_reset" }.count == 2 })
            #expect(try await eventually { try await rig.outbox().allSatisfy { $0.state != "pending" } })
            let resets = try await rig.outbox().filter { $0.kind == "password_reset" }
            #expect(resets.allSatisfy { $0.recipient == "cora@example.test" && ["sent", "replaced"].contains($0.state) }, "\(resets)")
            #expect(try rig.server.messages().allSatisfy { !$0.recipients.contains("dora@example.test") || $0.subject.contains("verification") })
        }
    }
}

/// A reset ends the account's open event streams within a heartbeat. (Named to run with the
/// event suites, alone after the rest: `scripts/test.sh`'s latency pass.)
@Suite struct ResetClosesStreamsEventsTests {
    @Test func aResetClosesTheAccountsOpenStreams() async throws {
        let rig = try await MailTestRig(clock: TestClock())
        try await withLiveApp({ rig.configure(&$0); $0.events.heartbeat = .seconds(1) }) { client, port in
            let eve = try await PasswordResetTests.verifiedAccount("streamer", email: "streamer@example.test", rig: rig, client: client)
            let stream = try await eve.stream(port: port)
            #expect(try await client.call(.post, "/v1/auth/password/forgot", json: ["login": "streamer"], tenant: rig.tenant).status == .accepted)
            #expect(try await eventually { try await rig.outbox().count == 2 })
            try await rig.deliver()
            let code = try MailTestRig.code(in: try await rig.server.waitForMessages(to: "streamer@example.test", count: 2)[1])
            let reset = try await client.call(
                .post, "/v1/auth/password/reset", json: ["login": "streamer", "code": code, "new_password": "streams end here now"], tenant: rig.tenant)
            #expect(reset.status == .ok)
            #expect(try await stream.waitForClose())
        }
    }
}
