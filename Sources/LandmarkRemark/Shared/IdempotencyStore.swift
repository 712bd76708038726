import Foundation
import Postgres

/// `Idempotency-Key` for `POST /v1/notes`, kept in PostgreSQL so every replica honours it.
///
/// 1. `claim` inserts the key with the request's fingerprint and no response, in a
///    transaction of its own (`NoteService.create` commits it before the work), so a
///    concurrent duplicate (on any replica) finds it at once.
///    It finds instead, when the key is taken: a different request
///    (`IdempotencyError.keyReused`), the first still running (`.inProgress`),
///    or the stored response to replay.
/// 2. The caller does the work and, in the same transaction as the work, `complete`s the
///    claim with the response, so a note exists exactly when its response is stored.
/// 3. If the work fails, `release` deletes the claim, so a retry can try again.
///
/// A stateless store like the others: its statements run on the connection it is given.
///
/// Keys live 24 hours. A claim whose request died without releasing it (a crash)
/// stops blocking retries after `abandonedAfterSeconds`; should that request still
/// finish later, its `complete` no longer finds its claim and its work rolls back.
struct IdempotencyStore: Sendable {
    static let lifetimeHours = 24
    static let abandonedAfterSeconds = 60

    /// A claimed key, identified by the moment it was claimed.
    struct Claim: Sendable {
        let key: String
        let claimedMicros: Int64
    }

    /// A stored response to send again.
    struct Replay: Sendable {
        let status: Int
        let body: String
        let location: String?
    }

    enum Outcome: Sendable {
        case claimed(Claim)
        case replay(Replay)
    }

    /// Claims `key` for `userID`'s request with `fingerprint`, or says what to answer instead;
    /// nil when the key's claim vanished between the insert and the read (its request
    /// failed and released it): the caller tries again in a new transaction.
    func claim(key: String, fingerprint: [UInt8], tenantID: Int64, userID: Int64, on connection: PostgresConnection) async throws -> Outcome? {
        // Expired keys of this user go first (the primary key's prefix finds them),
        // and with them an abandoned claim on this key.
        try await connection.query("""
            DELETE FROM idempotency_keys
            WHERE tenant_id = \(tenantID) AND user_id = \(userID)
              AND (created_at < now() - \(Double(Self.lifetimeHours * 3600)) * interval '1 second'
                   OR (key = \(key) AND response_status IS NULL
                       AND created_at < now() - \(Double(Self.abandonedAfterSeconds)) * interval '1 second'))
            """)
        let inserted = try await connection.query("""
            INSERT INTO idempotency_keys (tenant_id, user_id, key, request_hash)
            VALUES (\(tenantID), \(userID), \(key), \(PostgresBytes(fingerprint)))
            ON CONFLICT DO NOTHING
            RETURNING created_at
            """)
        if let row = inserted.first {
            // Microseconds since 1970, from the timestamp itself (Citus refuses an
            // expression that is not immutable, such as extract, in RETURNING). A Date
            // holds today's timestamps to a tenth of a microsecond: rounding is exact.
            let created = try row.decode(Date.self, column: 0)
            return .claimed(Claim(key: key, claimedMicros: Int64((created.timeIntervalSince1970 * 1_000_000).rounded())))
        }
        let existing = try await connection.query("""
            SELECT request_hash, response_status, response_body, response_location
            FROM idempotency_keys
            WHERE tenant_id = \(tenantID) AND user_id = \(userID) AND key = \(key)
            """)
        guard let row = existing.first else { return nil }
        let (hash, status, body, location) = try row.decode((PostgresBytes, Int?, String?, String?).self)
        guard hash.bytes == fingerprint else { throw IdempotencyError.keyReused }
        guard let status, let body else { throw IdempotencyError.inProgress }
        return .replay(Replay(status: status, body: body, location: location))
    }

    /// Stores the response on the claim, inside the transaction that did the work.
    /// Throws `IdempotencyError.inProgress` when the claim is no longer ours, which rolls the work back.
    func complete(
        _ claim: Claim, status: Int, body: String, location: String?, tenantID: Int64, userID: Int64, on connection: PostgresConnection
    ) async throws {
        let updated = try await connection.query("""
            UPDATE idempotency_keys
            SET response_status = \(status), response_body = \(body), response_location = \(location)
            WHERE tenant_id = \(tenantID) AND user_id = \(userID) AND key = \(claim.key)
              AND created_at = timestamptz 'epoch' + \(claim.claimedMicros) * interval '1 microsecond'
              AND response_status IS NULL
            """)
        guard updated.affectedRows == 1 else { throw IdempotencyError.inProgress }
    }

    /// Gives the key back after the work failed.
    func release(_ claim: Claim, tenantID: Int64, userID: Int64, on connection: PostgresConnection) async throws {
        try await connection.query("""
            DELETE FROM idempotency_keys
            WHERE tenant_id = \(tenantID) AND user_id = \(userID) AND key = \(claim.key)
              AND created_at = timestamptz 'epoch' + \(claim.claimedMicros) * interval '1 microsecond'
              AND response_status IS NULL
            """)
    }
}
