import Foundation
import Mail
import TestMailServer
import Testing

/// libcurl's SMTP against a real server on loopback (aiosmtpd), with TLS and a login.
@Suite struct SMTPClientTests {
    let transport = MailTransport()

    func endpoint(_ server: TestMailServer, password: String? = nil, authentication: SMTPEndpoint.Authentication = .plain,
                  caFile: String? = TestMailServer.caFile) throws -> SMTPEndpoint {
        try SMTPEndpoint(url: server.url, username: server.username, password: password ?? server.password,
                         authentication: authentication, caFile: caFile, connectTimeout: .seconds(20), timeout: .seconds(60))
    }

    func message(to: String, subject: String = "Your code", text: String = "Your code is 123456.", html: String = "<p>Your code is <b>123456</b>.</p>") throws -> MailMessage {
        try MailMessage(
            from: MailAddress("noreply@maps.example"), fromName: "Acme Maps", to: MailAddress(to), subject: subject, text: text, html: html,
            messageID: "<\(UUID().uuidString)@maps.example>", date: Date(timeIntervalSince1970: 1_795_000_000))
    }

    @Test(arguments: [(TestMailServer.TLS.startTLS, SMTPEndpoint.Authentication.plain), (.startTLS, .login), (.implicit, .plain), (.implicit, .login)])
    func sendsOverTLSWithALogin(tls: TestMailServer.TLS, authentication: SMTPEndpoint.Authentication) async throws {
        let server = try TestMailServer(tls: tls)
        let outcome = try await transport.send(try message(to: "ana@example.test"), via: try endpoint(server, authentication: authentication))
        #expect(outcome == .sent)
        let mail = try #require(try server.messages().first)
        #expect(mail.tls && mail.login == "sender")
        #expect(mail.mailFrom == "<noreply@maps.example>" || mail.mailFrom == "noreply@maps.example")
        #expect(mail.recipients == ["ana@example.test"])
    }

    @Test func theMessageIsMultipartWithItsOwnHeadersAndUnicodeEncoded() async throws {
        let server = try TestMailServer()
        let subject = "Grüße aus Zürich: 東京タワーの夜景 — your code for «Café Crème» is ready, valid for fifteen minutes"
        let text = "Hallo Zoë,\nyour code is 123456.\n.\nA line with only a dot above, and a long one: " + String(repeating: "abcdefghij", count: 12)
        var sent = try message(to: "zoe@example.test", subject: subject, text: text, html: "<p>Grüße, <b>123456</b></p>")
        sent.fromName = "Cafés de Zürich"
        #expect(try await transport.send(sent, via: try endpoint(server)) == .sent)
        let mail = try #require(try server.messages().first)
        #expect(mail.contentType == "multipart/alternative")
        #expect(mail.subject == subject)
        #expect(mail.from == "Cafés de Zürich <noreply@maps.example>")
        #expect(mail.messageID == sent.messageID)
        #expect(mail.date == "Wed, 18 Nov 2026 11:06:40 +0000")
        #expect(mail.text.replacingOccurrences(of: "\r\n", with: "\n").trimmingCharacters(in: .newlines) == text)
        #expect(mail.html.contains("<p>Grüße, <b>123456</b></p>"))
        // Nothing outside ASCII went out raw: the headers are encoded words, the parts quoted-printable.
        #expect(mail.raw.allSatisfy { $0 < 0x80 })
        #expect(String(decoding: mail.raw, as: UTF8.self).split(separator: "\r\n").allSatisfy { $0.utf8.count <= 998 })
    }

    @Test func aLineBreakInTheSubjectCannotAddAHeader() async throws {
        let server = try TestMailServer()
        let sent = try message(to: "eve@example.test", subject: "Hello\r\nBcc: victim@example.test\r\nX-Injected: yes")
        #expect(try await transport.send(sent, via: try endpoint(server)) == .sent)
        let mail = try #require(try server.messages().first)
        #expect(mail.recipients == ["eve@example.test"])
        let headers = String(decoding: mail.raw, as: UTF8.self).components(separatedBy: "\r\n\r\n")[0]
        #expect(!headers.contains("\r\nBcc:") && !headers.contains("\r\nX-Injected:"))
        #expect(mail.subject == "Hello  Bcc: victim@example.test  X-Injected: yes")
    }

    @Test func refusalsArePlacedByTheCommandTheyAnswered() async throws {
        let server = try TestMailServer()
        let via = try endpoint(server)
        let refused = try await transport.send(try message(to: "gone+perm@example.test"), via: via)
        guard case .rejected(true, 550, _) = refused else {
            Issue.record("a 550 at RCPT rejects the address: \(refused)"); return
        }
        guard case .deferred(451, _) = try await transport.send(try message(to: "busy+temp@example.test"), via: via) else {
            Issue.record("a 451 at RCPT is deferred"); return
        }
        guard case .rejected(false, 554, _) = try await transport.send(try message(to: "spam+dataperm@example.test"), via: via) else {
            Issue.record("a 554 to the message rejects the message, not the address"); return
        }
        // And the handle goes on after each: the next message is sent.
        #expect(try await transport.send(try message(to: "ok@example.test"), via: via) == .sent)
        #expect(try server.messages().map(\.recipients) == [["ok@example.test"]])
    }

    @Test func aLostAcknowledgementIsUnknownAndTheMessageMayHaveArrived() async throws {
        let server = try TestMailServer()
        guard case .unknown = try await transport.send(try message(to: "ana+lostack@example.test"), via: try endpoint(server)) else {
            Issue.record("the connection lost before the 250 is an unknown outcome"); return
        }
        #expect(try server.messages().count == 1)
    }

    @Test func aRelayThatCannotBeUsedIsUnavailableNotTheMessagesFault() async throws {
        let server = try TestMailServer()
        func unavailable(_ outcome: SMTPOutcome) -> Bool { if case .relayUnavailable = outcome { true } else { false } }
        // Wrong password (535), an untrusted certificate, 421 at MAIL, and the server down.
        #expect(unavailable(try await transport.send(try message(to: "a@example.test"), via: try endpoint(server, password: "wrong"))))
        #expect(unavailable(try await transport.send(try message(to: "a@example.test"), via: try endpoint(server, caFile: nil))))
        try server.setMode("tempfail")
        #expect(unavailable(try await transport.send(try message(to: "a@example.test"), via: try endpoint(server))))
        try server.setMode("accept")
        server.stop()
        #expect(unavailable(try await transport.send(try message(to: "a@example.test"), via: try endpoint(server))))
        try server.start()
        #expect(try await transport.send(try message(to: "a@example.test"), via: try endpoint(server)) == .sent)
        #expect(try server.messages().count == 1)
    }
}
