import Credentials
import Foundation
import Postgres

/// The outbox's SQL (migration 0031): messages written in their code's transaction, and the
/// senders' claims and records. Every statement names its tenant (Citus routes it to one shard).
struct MailOutbox: Sendable {
    /// Seals each message's words: they carry a live code.
    let secrets: SecretBox

    /// A message to send, rendered.
    struct Outgoing: Sendable {
        let kind: MailKind
        let userID: Int64?
        let recipient: String
        let words: MailTemplates.Rendered
        /// The code's end: unsent by then, the message is dropped.
        let notAfter: Date
    }

    /// Writes `message` in the caller's transaction. A pending message of the same kind to the
    /// same user is replaced (its code was just ended); mail to an address the relay refused for
    /// good is kept as `suppressed`, unsent.
    func enqueue(_ message: Outgoing, tenant: TenantMail, now: Date, on connection: PostgresConnection) async throws {
        if let userID = message.userID {
            try await connection.query("""
                UPDATE mail_outbox SET state = 'replaced', payload_sealed = NULL, finished_at = \(now)
                WHERE tenant_id = \(tenant.tenantID) AND user_id = \(userID) AND kind = \(message.kind.rawValue) AND state = 'pending'
                """)
        }
        let messageID = "<lr.\(tenant.tenantID).\(Tokens.hex(Tokens.randomBytes(count: 16)))@\(tenant.from.domain)>"
        let sealed = PostgresBytes(secrets.seal(Array(try JSONEncoder().encode(message.words)), binding: Self.binding(tenant.tenantID, messageID)))
        // Two plain statements rather than an INSERT … SELECT joined on constants, which Citus
        // plans apart from the tenant's shard.
        let suppressed = try await !connection.query("""
            SELECT FROM mail_suppressions WHERE tenant_id = \(tenant.tenantID) AND address = lower(\(message.recipient))
            """).isEmpty
        try await connection.query("""
            INSERT INTO mail_outbox (tenant_id, user_id, kind, recipient, message_id, payload_sealed, not_after, state,
                                     next_attempt_at, created_at, finished_at)
            VALUES (\(tenant.tenantID), \(message.userID), \(message.kind.rawValue), \(message.recipient), \(messageID),
                    \(suppressed ? nil : sealed), \(message.notAfter), \(suppressed ? "suppressed" : "pending"), \(now), \(now),
                    \(suppressed ? now : nil))
            """)
    }

    /// A message a sender took: what it needs to send it, and the attempt it records under.
    struct Claimed: Sendable {
        let id: Int64
        let attempt: Int
        /// The message's own refusals so far, which space its retries.
        let failures: Int
        let kind: MailKind
        let recipient: String
        let messageID: String
        let notAfter: Date
        let createdAt: Date
        /// Nil when the message cannot be opened (sealed under another data key).
        let words: MailTemplates.Rendered?
    }

    /// The tenant's next due messages in order, each attempt numbered: whoever claims a message
    /// again (after a sender died) makes the earlier attempt's record count for nothing.
    func claim(tenantID: Int64, now: Date, limit: Int, on connection: some PostgresQuerying) async throws -> [Claimed] {
        let rows = try await connection.query("""
            WITH due AS (
                SELECT tenant_id, id FROM mail_outbox
                WHERE tenant_id = \(tenantID) AND state = 'pending' AND next_attempt_at <= \(now)
                ORDER BY id LIMIT \(limit) FOR UPDATE SKIP LOCKED)
            UPDATE mail_outbox m SET attempts = m.attempts + 1
            FROM due WHERE m.tenant_id = due.tenant_id AND m.id = due.id
            RETURNING m.id, m.attempts, m.failures, m.kind, m.recipient, m.message_id, m.not_after, m.created_at, m.payload_sealed
            """)
        return try rows.map { row in
            let (id, attempt, failures, kind, recipient, messageID, notAfter, createdAt, sealed) =
                try row.decode((Int64, Int, Int, String, String, String, Date, Date, PostgresBytes?).self)
            // Nil when it cannot be opened (the data key changed): the sender fails it.
            let words = sealed.flatMap {
                try? JSONDecoder().decode(MailTemplates.Rendered.self, from: Data(secrets.open($0.bytes, binding: Self.binding(tenantID, messageID))))
            }
            return Claimed(
                id: id, attempt: attempt, failures: failures, kind: MailKind(rawValue: kind) ?? .verifyEmail, recipient: recipient, messageID: messageID,
                notAfter: notAfter, createdAt: createdAt, words: words)
        }.sorted { $0.id < $1.id }
    }

    /// How an attempt ended, as the outbox keeps it.
    enum Record: Sendable {
        case sent(code: Int)
        /// Final: `failed` (refused for good), `expired` (its code ended first).
        case final(state: String, code: Int?, error: String, suppress: Bool)
        /// Try again at `next`, counting one more failure of this message.
        case retry(next: Date, code: Int?, error: String)
    }

    /// Records attempt `attempt` of message `id`, only if no later attempt was claimed since.
    @discardableResult
    func record(_ record: Record, tenantID: Int64, id: Int64, attempt: Int, recipient: String, now: Date, on connection: some PostgresQuerying) async throws -> Bool {
        let rows: PostgresRows
        switch record {
        case .sent(let code):
            rows = try await connection.query("""
                UPDATE mail_outbox SET state = 'sent', payload_sealed = NULL, finished_at = \(now), last_smtp_code = \(code), last_error = NULL
                WHERE tenant_id = \(tenantID) AND id = \(id) AND attempts = \(attempt) AND state = 'pending' RETURNING 1
                """)
        case .final(let state, let code, let error, let suppress):
            rows = try await connection.query("""
                UPDATE mail_outbox SET state = \(state), payload_sealed = NULL, finished_at = \(now), last_smtp_code = \(code),
                                       last_error = left(\(error), 500)
                WHERE tenant_id = \(tenantID) AND id = \(id) AND attempts = \(attempt) AND state = 'pending' RETURNING 1
                """)
            if suppress, !rows.isEmpty {
                try await connection.query("""
                    INSERT INTO mail_suppressions (tenant_id, address, smtp_code, detail, created_at)
                    VALUES (\(tenantID), lower(\(recipient)), \(code), left(\(error), 500), \(now))
                    ON CONFLICT (tenant_id, address) DO NOTHING
                    """)
            }
        case .retry(let next, let code, let error):
            rows = try await connection.query("""
                UPDATE mail_outbox SET failures = failures + 1, next_attempt_at = \(next), last_smtp_code = \(code), last_error = left(\(error), 500)
                WHERE tenant_id = \(tenantID) AND id = \(id) AND attempts = \(attempt) AND state = 'pending' RETURNING 1
                """)
        }
        return !rows.isEmpty
    }

    /// The tenants' queues: one sender at a time per tenant.
    static let queues = SenderQueues(table: "mail_queues", failures: "relay_failures")

    /// The tenants with mail due (every tenant's, for the senders).
    func dueTenants(now: Date, on pool: PostgresPool) async throws -> [Int64] {
        try await pool.query("SELECT mail_due_tenants(\(now))").map { try $0.decode(Int64.self, column: 0) }
    }

    private static func binding(_ tenantID: Int64, _ messageID: String) -> [UInt8] {
        Array("mail_outbox:\(tenantID):\(messageID)".utf8)
    }
}
