import Credentials
import Foundation
import Logging
import Postgres
import Synchronization
import TestMailServer
import TestPolling
import Testing

@testable import LandmarkRemark

/// A clock a test moves by hand (`WallClock`), for codes' and messages' lifetimes.
final class TestClock: Sendable {
    private let time: Mutex<Date>

    /// Starts `yearsAhead` years from now: messages made on it are due only for senders on a
    /// clock as far ahead, so no other suite's sender (on the real clock) takes them.
    init(yearsAhead: Double = 30) { time = Mutex(Date().addingTimeInterval(yearsAhead * 365 * 86400)) }

    var wallClock: WallClock { WallClock { self.now() } }
    func now() -> Date { time.withLock { $0 } }
    func advance(_ seconds: TimeInterval) { time.withLock { $0 += seconds } }
}

/// A tenant whose mail goes to a real SMTP server on loopback (TLS, a login), with the
/// service's data key and, when asked, a clock of the test's own.
struct MailTestRig: Sendable {
    let tenant: String
    let tenantID: Int64
    let server: TestMailServer
    let dataKey: [UInt8]
    let clock: TestClock?
    /// Whether the application's own sender runs (polling every 20 ms); else the test
    /// delivers with `deliver()`.
    let appSender: Bool
    static let linkBase = "https://maps.example"
    /// One key for every rig, as every replica of a deployment shares one: a sender of one
    /// suite may deliver another's mail.
    static let dataKey = Tokens.randomBytes(count: 32)

    init(tls: TestMailServer.TLS = .startTLS, clock: TestClock? = nil, appSender: Bool = false) async throws {
        tenant = try await TestEnvironment.makeTenant()
        server = try TestMailServer(tls: tls)
        dataKey = Self.dataKey
        self.clock = clock
        self.appSender = appSender
        let (tenant, server) = (tenant, server)
        tenantID = try await TestEnvironment.withOwnerPool { pool in
            try await pool.query("""
                SELECT admin.set_tenant_mail(\(tenant), \(server.url), \(server.username), \(server.password), 'noreply@maps.example', 'Maps Café')
                """)
            try await pool.query("SELECT 1 FROM admin.set_tenant_setting(\(tenant), 'link_base_url', \(Self.linkBase))")
            return try await pool.query("SELECT id FROM tenants WHERE slug = \(tenant)")[0].decode(Int64.self)
        }
    }

    /// The service's settings for this rig.
    func configure(_ configuration: inout AppConfiguration) {
        configuration.identity.dataKey = dataKey
        configuration.mail.caFile = TestMailServer.caFile
        configuration.mail.senderEnabled = appSender
        configuration.mail.pollInterval = .milliseconds(20)
        if let clock { configuration.clock = clock.wallClock }
    }

    /// A sender of the test's own on `pool` (as another replica's would be), on the rig's clock.
    func sender(pool: PostgresPool, afterAccepted: @escaping @Sendable (Int64) async throws -> Void = { _ in }) -> MailSender {
        var settings = MailSettings()
        settings.caFile = TestMailServer.caFile
        settings.relayBackoffCap = .seconds(30)
        return MailSender(
            pool: pool, outbox: MailOutbox(secrets: try! SecretBox(key: dataKey)), tenants: TenantMailStore(settings: settings),
            clock: clock?.wallClock ?? .system, settings: settings, logger: TestEnvironment.logger, afterAccepted: afterAccepted)
    }

    /// Delivers the tenant's due mail with a sender of the test's own.
    func deliver() async throws {
        try await TestEnvironment.withAppPool { pool in try await sender(pool: pool).drain(tenantID: tenantID) }
    }

    /// The outbox's rows of the tenant, oldest first: (kind, recipient, state, attempts).
    func outbox() async throws -> [(kind: String, recipient: String, state: String, attempts: Int)] {
        try await TestEnvironment.withOwnerPool { pool in
            try await pool.query("SELECT kind, recipient, state, attempts FROM mail_outbox WHERE tenant_id = \(tenantID) ORDER BY id").map {
                try $0.decode((String, String, String, Int).self)
            }
        }.map { (kind: $0.0, recipient: $0.1, state: $0.2, attempts: $0.3) }
    }

    /// The 6-digit code in a message.
    static func code(in mail: ReceivedMail) throws -> String {
        let digits = try #require(mail.text.firstMatch(of: /\b([0-9]{6})\b/)).1
        return String(digits)
    }

    /// The link's token in a message (`…/links/<page>#t=<token>`).
    static func linkToken(in mail: ReceivedMail) throws -> String {
        String(try #require(mail.text.firstMatch(of: /#t=(lr_ml_[A-Za-z0-9_-]+)/)).1)
    }
}

/// What a sender's hook throws to die between the relay's (or APNs's) acceptance and the record.
struct Died: Error {}
