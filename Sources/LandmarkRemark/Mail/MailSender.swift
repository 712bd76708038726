import Foundation
import Logging
import Mail
import Postgres
import ServiceLifecycle

/// Delivers the outbox. Every replica may run one: per tenant, the sender that holds the
/// tenant's queue sends its due messages in order, one at a time, and records each; the others
/// find the queue held and move on. A relay that cannot be used rests the queue (5 s, doubling
/// up to the cap) with its messages left in order; a message's own refusal (4xx) delays only it.
final class MailSender: Service, Sendable {
    let pool: PostgresPool
    /// Nil without a data key: nothing can have been written, nothing is sent.
    let outbox: MailOutbox?
    let tenants: TenantMailStore
    let transport: MailTransport
    let clock: WallClock
    let settings: MailSettings
    let logger: Logger
    /// The polling, the queues' holding and resting, shared with the push sender.
    let loop: SenderLoop
    /// Runs after the relay accepted a message and before it is recorded: tests make a sender
    /// die there (it throws), the window in which a message is sent twice.
    let afterAccepted: @Sendable (Int64) async throws -> Void

    init(
        pool: PostgresPool, outbox: MailOutbox?, tenants: TenantMailStore, clock: WallClock, settings: MailSettings, logger: Logger,
        afterAccepted: @escaping @Sendable (Int64) async throws -> Void = { _ in }
    ) {
        self.pool = pool
        self.outbox = outbox
        self.tenants = tenants
        self.transport = MailTransport()
        self.clock = clock
        self.settings = settings
        self.logger = logger
        self.afterAccepted = afterAccepted
        loop = SenderLoop(
            queues: MailOutbox.queues, pool: pool, clock: clock, lease: settings.lease, pollInterval: settings.pollInterval, logger: logger)
    }

    /// Tells an idle sender that a message was just written.
    func poke() { loop.poke() }

    func run() async throws {
        if settings.senderEnabled, outbox != nil {
            await loop.run(failure: "delivering mail failed") { try await self.deliverDue() }
        } else {
            try? await gracefulShutdown()
        }
        try? await transport.shutdown()
    }

    /// One pass over every tenant with mail due.
    func deliverDue() async throws {
        guard let outbox else { return }
        try await loop.drainEach(try await outbox.dueTenants(now: clock.now(), on: pool), failure: "delivering a tenant's mail failed") {
            try await self.drain(tenantID: $0)
        }
    }

    /// Sends the tenant's due mail while this sender holds its queue. Throws (leaving the queue
    /// held until its lease ends) only when the database or `afterAccepted` fails. Cancelled (the
    /// replica is stopping), it lets the queue go first: held, the tenant's mail would wait the
    /// whole lease (two minutes) for another replica, for every deploy. A message the relay took
    /// but not yet recorded may then go once more, as after a sender that died.
    func drain(tenantID: Int64) async throws {
        guard let outbox else { return }
        try await loop.whileHolding(tenantID: tenantID) { db, relayFailures in
            try await drainHeld(tenantID: tenantID, relayFailures: relayFailures, outbox: outbox, db: db)
        }
    }

    private func drainHeld(tenantID: Int64, relayFailures: Int, outbox: MailOutbox, db: TenantDB) async throws {
        guard let mail = try await db.run({ try await self.tenants.mail(tenantID: tenantID, on: $0, logger: self.logger) }) else {
            // The relay was removed while mail waited: try again in a minute, in case it comes back.
            try await loop.rest(db, for: .seconds(60), error: "the tenant has no mail relay")
            return
        }
        var relayWorked = false
        while true {
            let batch = try await db.run { try await outbox.claim(tenantID: tenantID, now: self.clock.now(), limit: 10, on: $0) }
            if batch.isEmpty { break }
            for message in batch {
                switch try await send(message, with: mail, outbox: outbox, db: db) {
                case .sent: relayWorked = true
                case .recorded: break
                case .relayUnavailable(let detail):
                    let rest = SenderQueues.rest(failures: relayFailures, cap: settings.relayBackoffCap)
                    logger.warning("the mail relay cannot be used; the queue rests", metadata: [
                        "tenant": "\(mail.slug)", "error": "\(detail)", "rest_ms": "\(rest.milliseconds)"])
                    try await loop.rest(db, for: rest, error: detail)
                    return
                }
                // Renew the lease after each message; a sender that lost it stops.
                guard try await loop.renew(db) != nil else { return }
            }
        }
        try await loop.release(db, worked: relayWorked)
    }

    private enum Sent { case sent, recorded, relayUnavailable(String) }

    private func send(_ claimed: MailOutbox.Claimed, with mail: TenantMail, outbox: MailOutbox, db: TenantDB) async throws -> Sent {
        let now = clock.now()
        func record(_ record: MailOutbox.Record) async throws {
            try await db.run { try await outbox.record(
                record, tenantID: mail.tenantID, id: claimed.id, attempt: claimed.attempt, recipient: claimed.recipient, now: self.clock.now(), on: $0) }
        }
        guard claimed.notAfter > now else {
            try await record(.final(state: "expired", code: nil, error: "its code ended before it could be sent", suppress: false))
            return .recorded
        }
        guard let words = claimed.words else {
            // Never dropped for it: a replica with the key that wrote it can still send it.
            return .relayUnavailable("the message cannot be opened: this replica's LR_DATA_KEY is not the one that wrote it")
        }
        let message: MailMessage
        do {
            message = MailMessage(
                from: mail.from, fromName: mail.fromName, to: try MailAddress(claimed.recipient), subject: words.subject,
                text: words.text, html: words.html, messageID: claimed.messageID, date: claimed.createdAt)
        } catch {
            try await record(.final(state: "failed", code: nil, error: "\(error)", suppress: false))
            return .recorded
        }
        let outcome = try await transport.send(message, via: mail.endpoint)
        switch outcome {
        case .sent:
            try await afterAccepted(claimed.id)
            try await record(.sent(code: 250))
            return .sent
        case .rejected(let recipient, let code, let detail):
            logger.notice("mail refused for good", metadata: ["tenant": "\(mail.slug)", "kind": "\(claimed.kind.rawValue)", "smtp": "\(code)", "error": "\(detail)"])
            try await record(.final(state: "failed", code: code, error: detail, suppress: recipient))
            return .recorded
        case .deferred(let code, let detail):
            try await record(.retry(next: now + Self.retryDelay(failures: claimed.failures), code: code, error: detail))
            return .recorded
        case .unknown(let detail):
            // The relay may have it: sent again later, with the same Message-ID.
            try await record(.retry(next: now + Self.retryDelay(failures: claimed.failures), code: nil, error: detail))
            return .recorded
        case .relayUnavailable(let code, let detail):
            return .relayUnavailable(code == 0 ? detail : "\(code) \(detail)")
        }
    }

    /// A message's own retries: 30 s, 2, 5, 15, 30 minutes, then hourly, each ±20 % so that
    /// messages refused together do not come back together.
    static func retryDelay(failures: Int) -> TimeInterval {
        let steps: [TimeInterval] = [30, 120, 300, 900, 1800, 3600]
        return steps[min(failures, steps.count - 1)] * Double.random(in: 0.8...1.2)
    }
}

extension Duration {
    var timeInterval: TimeInterval { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
    var milliseconds: Int64 { components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000 }
}
