import Mail
import Testing

@Suite struct MailValuesTests {
    @Test func endpointsNameTheirTLSModeAndNeedALogin() throws {
        let submission = try SMTPEndpoint(url: "smtp://relay.example:2587", username: "u", password: "p")
        #expect(submission.security == .startTLS && submission.port == 2587 && submission.url == "smtp://relay.example:2587")
        let implicit = try SMTPEndpoint(url: "SMTPS://relay.example", username: "u", password: "p")
        #expect(implicit.security == .implicitTLS && implicit.port == 465)
        #expect(try SMTPEndpoint(url: "smtp://relay.example", username: "u", password: "p").port == 587)
        for bad in ["http://relay.example", "relay.example:587", "smtp://", "smtp://u:p@relay.example", "smtp://relay.example/x",
                    "smtp://relay.example:0", "smtp://relay.example:99999", "smtp://relay.example:x", "smtp://relay example"] {
            #expect(throws: MailError.self) { try SMTPEndpoint(url: bad, username: "u", password: "p") }
        }
        #expect(throws: MailError.self) { try SMTPEndpoint(url: "smtp://relay.example", username: "", password: "p") }
    }

    @Test func addressesArePrintableASCIIWithADomain() throws {
        #expect(try MailAddress("ana.o'neil+maps@example.co.uk").domain == "example.co.uk")
        for bad in ["", "ana", "@example.test", "ana@", "ana@localhost", "a b@example.test", "ana@exa mple.test", "<ana@example.test>",
                    "ana@example.test>\r\nRCPT TO:<x@y.z", "zoë@example.test", "ana@@example.test", String(repeating: "a", count: 250) + "@x.io"] {
            #expect(throws: MailError.self, "\(bad.debugDescription)") { try MailAddress(bad) }
        }
    }
}
