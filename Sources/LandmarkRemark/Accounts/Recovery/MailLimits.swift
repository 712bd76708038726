import Foundation
import Postgres

/// The sending limits (migration 0031's `mail_limits`): fixed windows, each request one
/// upsert, so parallel requests cannot both take the last slot. A window's boundary may let
/// twice the limit through in a short time; that is the price of one statement per check.
struct MailLimits: Sendable {
    let perRecipient: Int
    let perAddress: Int
    static let recipientWindow: TimeInterval = 15 * 60
    static let addressWindow: TimeInterval = 3600

    /// Counts a request from `address` that mails `recipient`: `tooMuchMail` when either is over.
    func take(recipient: String, address: String, tenantID: Int64, now: Date, on connection: PostgresConnection) async throws {
        if let wait = try await takeAddress(address, tenantID: tenantID, now: now, on: connection) { throw RecoveryError.tooMuchMail(retryAfter: wait) }
        if let wait = try await takeRecipient(recipient, tenantID: tenantID, now: now, on: connection) { throw RecoveryError.tooMuchMail(retryAfter: wait) }
    }

    /// Counts one message to `email`; the seconds to wait when it is over the limit.
    func takeRecipient(_ email: String, tenantID: Int64, now: Date, on connection: PostgresConnection) async throws -> Int? {
        try await take("rcpt:" + email.lowercased(), limit: perRecipient, window: Self.recipientWindow, tenantID: tenantID, now: now, on: connection)
    }

    /// Counts one mail-sending request from `address`; the seconds to wait when over the limit.
    func takeAddress(_ address: String, tenantID: Int64, now: Date, on connection: PostgresConnection) async throws -> Int? {
        try await take("addr:" + address, limit: perAddress, window: Self.addressWindow, tenantID: tenantID, now: now, on: connection)
    }

    private func take(_ key: String, limit: Int, window: TimeInterval, tenantID: Int64, now: Date, on connection: PostgresConnection) async throws -> Int? {
        let start = Date(timeIntervalSince1970: (now.timeIntervalSince1970 / window).rounded(.down) * window)
        let count = try await connection.query("""
            INSERT INTO mail_limits AS l (tenant_id, key, window_start, count) VALUES (\(tenantID), \(key), \(start), 1)
            ON CONFLICT (tenant_id, key, window_start) DO UPDATE SET count = l.count + 1
            RETURNING l.count
            """)[0].decode(Int.self, column: 0)
        guard count > limit else { return nil }
        return max(1, Int((start.timeIntervalSince1970 + window - now.timeIntervalSince1970).rounded(.up)))
    }
}
