import Credentials
import Foundation
import Postgres

/// One-time codes and links that prove a person reads an address (migration 0031): a 6-digit
/// code to type, and a link token to tap, sent together. Each dies when used, when its time
/// is up, after 5 wrong codes, or when a newer one is made for the same purpose.
struct AccountCodes: Sendable {
    enum Purpose: String, Sendable {
        case verifyEmail = "verify_email"
        case resetPassword = "reset_password"
    }

    /// The codes' HMAC key: the service's data key, so a copy of the database alone cannot
    /// try the million codes against a stored digest.
    let key: [UInt8]
    static let maxFailures = 5
    static let linkPrefix = "lr_ml_"

    struct Issued: Sendable {
        let code: String
        let linkToken: String
        let codeExpiresAt: Date
        let linkExpiresAt: Date
    }

    /// A new code and link for `purpose`, ending the user's earlier ones for it.
    func issue(
        _ purpose: Purpose, tenantID: Int64, userID: Int64, email: String, now: Date, codeMinutes: Int, linkMinutes: Int,
        on connection: PostgresConnection
    ) async throws -> Issued {
        let code = Self.randomCode()
        let link = Tokens.tenantToken(prefix: Self.linkPrefix, tenantID: tenantID)
        let issued = Issued(
            code: code, linkToken: link, codeExpiresAt: now + TimeInterval(codeMinutes * 60), linkExpiresAt: now + TimeInterval(linkMinutes * 60))
        try await connection.query("""
            UPDATE account_codes SET ended_at = \(now), ended_reason = 'replaced'
            WHERE tenant_id = \(tenantID) AND user_id = \(userID) AND purpose = \(purpose.rawValue) AND ended_at IS NULL
            """)
        try await connection.query("""
            INSERT INTO account_codes (tenant_id, user_id, purpose, email, code_hmac, link_hash, code_expires_at, link_expires_at, created_at)
            VALUES (\(tenantID), \(userID), \(purpose.rawValue), \(email), \(digest(code, purpose, tenantID, userID)),
                    \(PostgresBytes(Tokens.sha256(link))), \(issued.codeExpiresAt), \(issued.linkExpiresAt), \(now))
            """)
        return issued
    }

    /// What a presented code or link is.
    enum Check: Sendable, Equatable {
        case valid(id: Int64, userID: Int64, email: String)
        /// Not the code (counted as a failure), or no such link.
        case wrong
        /// Used, replaced, expired, or out of tries.
        case dead
    }

    /// The user's live code for `purpose` against `code`, locked for the caller's transaction;
    /// a wrong one counts a failure (and the fifth ends it), which the caller must commit.
    func check(code: String, _ purpose: Purpose, tenantID: Int64, userID: Int64, now: Date, on connection: PostgresConnection) async throws -> Check {
        let rows = try await connection.query("""
            SELECT id, email, code_hmac, code_expires_at > \(now) AND failures < \(Self.maxFailures)
            FROM account_codes
            WHERE tenant_id = \(tenantID) AND user_id = \(userID) AND purpose = \(purpose.rawValue) AND ended_at IS NULL
            ORDER BY id DESC LIMIT 1 FOR UPDATE
            """)
        guard let row = rows.first else { return .dead }
        let (id, email, stored, live) = try row.decode((Int64, String, PostgresBytes, Bool).self)
        guard live else { return .dead }
        guard Tokens.constantTimeEquals(stored.bytes, digest(code, purpose, tenantID, userID).bytes) else {
            try await connection.query("""
                UPDATE account_codes SET failures = failures + 1,
                    ended_at = CASE WHEN failures + 1 >= \(Self.maxFailures) THEN \(now) END,
                    ended_reason = CASE WHEN failures + 1 >= \(Self.maxFailures) THEN 'failures' END
                WHERE tenant_id = \(tenantID) AND id = \(id)
                """)
            return .wrong
        }
        return .valid(id: id, userID: userID, email: email)
    }

    /// The link `token` for `purpose`, locked for the caller's transaction.
    func check(link token: String, _ purpose: Purpose, tenantID: Int64, now: Date, on connection: PostgresConnection) async throws -> Check {
        let rows = try await connection.query("""
            SELECT id, user_id, email, ended_at IS NULL AND link_expires_at > \(now) FROM account_codes
            WHERE tenant_id = \(tenantID) AND link_hash = \(PostgresBytes(Tokens.sha256(token))) AND purpose = \(purpose.rawValue)
            FOR UPDATE
            """)
        guard let row = rows.first else { return .wrong }
        let (id, userID, email, live) = try row.decode((Int64, Int64, String, Bool).self)
        return live ? .valid(id: id, userID: userID, email: email) : .dead
    }

    /// Ends a code once it did its work.
    func use(id: Int64, tenantID: Int64, now: Date, on connection: PostgresConnection) async throws {
        try await connection.query("""
            UPDATE account_codes SET ended_at = \(now), ended_reason = 'used' WHERE tenant_id = \(tenantID) AND id = \(id) AND ended_at IS NULL
            """)
    }

    /// Ends every live code of the user for `purpose` (all reset codes once the password was reset).
    func endAll(_ purpose: Purpose, tenantID: Int64, userID: Int64, now: Date, on connection: PostgresConnection) async throws {
        try await connection.query("""
            UPDATE account_codes SET ended_at = \(now), ended_reason = 'used'
            WHERE tenant_id = \(tenantID) AND user_id = \(userID) AND purpose = \(purpose.rawValue) AND ended_at IS NULL
            """)
    }

    /// The tenant a link token names (it carries it, so the link's page needs no X-Tenant).
    static func tenant(ofLink token: String) -> Int64? {
        guard token.utf8.count <= 128, case .tenant(let id) = Tokens.tenantPart(of: token, prefix: linkPrefix) else { return nil }
        return id
    }

    private func digest(_ code: String, _ purpose: Purpose, _ tenantID: Int64, _ userID: Int64) -> PostgresBytes {
        PostgresBytes(Tokens.hmacSHA256(key: key, message: Array("account_code:\(tenantID):\(userID):\(purpose.rawValue):\(code)".utf8)))
    }

    /// Six digits, uniform: 32 random bits, redrawn above the last whole multiple of a million.
    static func randomCode() -> String {
        while true {
            let bytes = Tokens.randomBytes(count: 4)
            let value = bytes.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            guard value < 4_294_000_000 else { continue }
            let digits = String(value % 1_000_000)
            return String(repeating: "0", count: 6 - digits.count) + digits
        }
    }
}
