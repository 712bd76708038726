import Foundation
import Postgres

/// A user as the auth and profile code needs it.
struct UserRecord: Sendable {
    let id: Int64
    let username: String
    let email: String?
    /// Nil for an account that signs in with ID tokens only, or a guest.
    let passwordHash: String?
    let createdAt: Date
}

/// The users table. Every call runs inside a tenant transaction, so row-level
/// security already limits it to one tenant; queries name the tenant as well so
/// the `(tenant_id, …)` indexes serve them.
struct UserStore: Sendable {
    static let columns: PostgresQuery = "id, username, email, password_hash, created_at"

    /// Reads `columns` starting at column `first` (0: a row of `columns` alone).
    static func decode(_ row: PostgresRow, from first: Int = 0) throws -> UserRecord {
        UserRecord(
            id: try row.decode(Int64.self, column: first), username: try row.decode(String.self, column: first + 1),
            email: try row.decode(String?.self, column: first + 2), passwordHash: try row.decode(String?.self, column: first + 3),
            createdAt: try row.decode(Date.self, column: first + 4))
    }

    /// The same where the user may be missing (a left join): nil when the id there is NULL.
    static func decodeIfPresent(_ row: PostgresRow, from first: Int) throws -> UserRecord? {
        guard try row.decode(Int64?.self, column: first) != nil else { return nil }
        return try decode(row, from: first)
    }

    /// Inserts a user; a case-insensitive clash becomes `AccountError.usernameTaken` or `.emailTaken`.
    /// A username the tenant's word list holds is refused (`ContentRefused`), whether the
    /// tenant refuses or holds text: a name is shown everywhere its user writes.
    func create(
        tenantID: Int64, username: String, email: String?, passwordHash: String?, guest: Bool = false, on connection: PostgresConnection
    ) async throws -> UserRecord {
        if try await TenantStore().contentFilter(tenantID: tenantID, on: connection).matches(username) {
            throw ContentRefused(field: "username")
        }
        do {
            let rows = try await connection.query("""
                INSERT INTO users (tenant_id, username, email, password_hash, guest)
                VALUES (\(tenantID), \(username), \(email), \(passwordHash), \(guest))
                RETURNING \(Self.columns)
                """)
            return try Self.decode(rows[0])
        } catch let error as PostgresError {
            throw Self.mapConflict(error)
        }
    }

    /// The active user that `login` names, by username or email, ignoring case as PostgreSQL's
    /// `lower()` does (which the unique indexes use, and which folds more than Swift's
    /// `lowercased()`). A statement of `columns`, meant as a subquery: `LoginThrottle` counts
    /// the attempt against the account it finds in the same statement.
    static func findForLogin(tenantID: Int64, login: String) -> PostgresQuery {
        """
        SELECT \(columns) FROM users
        WHERE tenant_id = \(tenantID) AND disabled_at IS NULL
          AND (lower(username) = lower(\(login)) OR lower(email) = lower(\(login)))
        ORDER BY lower(username) = lower(\(login)) DESC
        LIMIT 1
        """
    }

    func find(tenantID: Int64, id: Int64, on connection: PostgresConnection) async throws -> UserRecord? {
        let rows = try await connection.query("""
            SELECT \(Self.columns) FROM users WHERE tenant_id = \(tenantID) AND id = \(id) AND disabled_at IS NULL
            """)
        return try rows.first.map { try Self.decode($0) }
    }

    /// The caller's own account with its counts; nil once the account is gone.
    func me(tenantID: Int64, id: Int64, on connection: PostgresConnection) async throws -> Me? {
        let rows = try await connection.query("""
            SELECT u.id, u.username, u.email, u.created_at, u.guest, u.password_hash IS NOT NULL,
                   (SELECT count(*) FROM notes n WHERE n.tenant_id = \(tenantID) AND n.user_id = u.id),
                   (SELECT count(*) FROM places p WHERE p.tenant_id = \(tenantID) AND p.created_by = u.id),
                   u.terms_version, u.moderation, u.moderator, u.email_verified_at IS NOT NULL, \(Self.pendingEmail(tenantID: tenantID)),
                   u.time_zone, \(Self.quietHours)
            FROM users u
            WHERE u.tenant_id = \(tenantID) AND u.id = \(id)
            """)
        guard let row = rows.first else { return nil }
        let (id, username, email, created, guest, hasPassword, notes, places) =
            try row.decode((Int64, String, String?, Date, Bool, Bool, Int, Int).self)
        return Me(
            id: id, username: username, email: email, emailVerified: try row.decode(Bool.self, column: 11),
            pendingEmail: try row.decode(String?.self, column: 12), createdAt: created, guest: guest, hasPassword: hasPassword,
            identities: [], noteCount: notes, placeCount: places, termsVersion: try row.decode(String?.self, column: 8),
            moderation: try row.decode(String?.self, column: 9).flatMap(Me.Moderation.init(rawValue:)),
            moderator: try row.decode(Bool.self, column: 10), timeZone: try row.decode(String?.self, column: 13),
            quietHours: try row.decode(String?.self, column: 14))
    }

    /// Sets the time zone and quiet hours given (`.some(nil)` clears one; `.none` keeps it).
    /// False, with nothing changed, when the time zone is not one PostgreSQL knows.
    func updateQuietHours(
        tenantID: Int64, id: Int64, timeZone: String??, quietHours: (start: String, end: String)??, on connection: PostgresConnection
    ) async throws -> Bool {
        if case .some(.some(let zone)) = timeZone {
            let known = try await connection.query("SELECT EXISTS (SELECT FROM pg_timezone_names WHERE name = \(zone))")[0].decode(Bool.self)
            guard known else { return false }
        }
        let zone: PostgresQuery = timeZone.map { "\($0)::text" } ?? "time_zone"
        let start: PostgresQuery = quietHours.map { "\($0?.start)::time" } ?? "quiet_start"
        let end: PostgresQuery = quietHours.map { "\($0?.end)::time" } ?? "quiet_end"
        try await connection.query("""
            UPDATE users SET time_zone = \(zone), quiet_start = \(start), quiet_end = \(end) WHERE tenant_id = \(tenantID) AND id = \(id)
            """)
        return true
    }

    /// `users u`'s quiet hours as the API shows them, `"HH:MM-HH:MM"`, or null.
    static let quietHours: PostgresQuery = "to_char(u.quiet_start, 'HH24:MI') || '-' || to_char(u.quiet_end, 'HH24:MI')"

    /// An address `users u`'s email is being changed to: the newest live verification code's,
    /// when it is not the current email (migration 0031).
    static func pendingEmail(tenantID: Int64) -> PostgresQuery {
        """
        (SELECT c.email FROM account_codes c
         WHERE c.tenant_id = \(tenantID) AND c.user_id = u.id AND c.purpose = 'verify_email' AND c.ended_at IS NULL
           AND c.link_expires_at > now() AND lower(c.email) IS DISTINCT FROM lower(u.email)
         ORDER BY c.id DESC LIMIT 1)
        """
    }

    /// What mail to an account needs: its name, its email and whether it is verified, and an
    /// address a change waits on.
    struct MailFacts: Sendable {
        let id: Int64
        let username: String
        let email: String?
        let verified: Bool
        let pendingEmail: String?

        init(_ row: (Int64, String, String?, Bool, String?)) {
            (id, username, email, verified, pendingEmail) = row
        }
    }

    /// The active user `id`'s mail facts.
    func mailFacts(tenantID: Int64, id: Int64, on connection: PostgresConnection) async throws -> MailFacts? {
        try await connection.query("""
            SELECT u.id, u.username, u.email, u.email_verified_at IS NOT NULL, \(Self.pendingEmail(tenantID: tenantID))
            FROM users u WHERE u.tenant_id = \(tenantID) AND u.id = \(id) AND u.disabled_at IS NULL
            """).first.map { try MailFacts(($0.decode((Int64, String, String?, Bool, String?).self))) }
    }

    /// The active user `login` names (username or email, as a login does), with its mail facts.
    func mailFacts(tenantID: Int64, login: String, on connection: PostgresConnection) async throws -> MailFacts? {
        try await connection.query("""
            SELECT u.id, u.username, u.email, u.email_verified_at IS NOT NULL, NULL::text
            FROM (\(Self.findForLogin(tenantID: tenantID, login: login))) found
            JOIN users u ON u.tenant_id = \(tenantID) AND u.id = found.id
            """).first.map { try MailFacts(($0.decode((Int64, String, String?, Bool, String?).self))) }
    }

    /// Whether another account of the tenant has `email` (ignoring case, as the unique index does).
    func emailTaken(_ email: String, tenantID: Int64, except userID: Int64, on connection: PostgresConnection) async throws -> Bool {
        try await !connection.query("""
            SELECT FROM users WHERE tenant_id = \(tenantID) AND lower(email) = lower(\(email)) AND id <> \(userID)
            """).isEmpty
    }

    /// Sets `email` and marks it verified; a clash with another account's is `.emailTaken`.
    func setVerifiedEmail(tenantID: Int64, id: Int64, email: String, now: Date, on connection: PostgresConnection) async throws {
        do {
            try await connection.query("""
                UPDATE users SET email = \(email), email_verified_at = \(now) WHERE tenant_id = \(tenantID) AND id = \(id)
                """)
        } catch let error as PostgresError {
            throw Self.mapConflict(error)
        }
    }

    /// An active user's public profile, by name ignoring case; `note_count` counts public notes only.
    /// Nil for a user `Audience` hides from `viewer` (blocked either way, reported, held), as
    /// for no user at all; `note_count` counts the public notes `viewer` sees.
    func publicProfile(tenantID: Int64, username: String, viewerID: Int64, on connection: PostgresConnection) async throws -> PublicProfile? {
        let rows = try await connection.query("""
            SELECT u.id, u.username, u.created_at,
                   (SELECT count(*) FROM notes n
                    WHERE n.tenant_id = \(tenantID) AND n.user_id = u.id AND n.visibility = 'public'
                      AND \(Audience.seesNote("n", tenantID: tenantID, viewerID: viewerID)))
            FROM users u
            WHERE u.tenant_id = \(tenantID) AND lower(u.username) = lower(\(username)) AND u.disabled_at IS NULL
              AND u.id NOT IN \(Audience.hiddenUsers(tenantID: tenantID, viewerID: viewerID))
            """)
        guard let row = rows.first else { return nil }
        let (id, name, created, notes) = try row.decode((Int64, String, Date, Int).self)
        return PublicProfile(id: id, username: name, createdAt: created, noteCount: notes)
    }

    /// Records that the user accepted `version` of the tenant's terms.
    func acceptTerms(tenantID: Int64, id: Int64, version: String, on connection: PostgresConnection) async throws {
        try await connection.query("""
            UPDATE users SET terms_version = \(version), terms_accepted_at = now() WHERE tenant_id = \(tenantID) AND id = \(id)
            """)
    }

    func updateEmail(tenantID: Int64, id: Int64, email: String?, on connection: PostgresConnection) async throws {
        do {
            try await connection.query("UPDATE users SET email = \(email) WHERE tenant_id = \(tenantID) AND id = \(id)")
        } catch let error as PostgresError {
            throw Self.mapConflict(error)
        }
    }

    /// Sets the password; a guest setting one becomes a full account.
    func updatePasswordHash(tenantID: Int64, id: Int64, hash: String, on connection: PostgresConnection) async throws {
        try await connection.query("UPDATE users SET password_hash = \(hash), guest = false WHERE tenant_id = \(tenantID) AND id = \(id)")
    }

    /// Deletes the account; sessions (and later notes) go with it through `ON DELETE CASCADE`.
    func delete(tenantID: Int64, id: Int64, on connection: PostgresConnection) async throws {
        try await connection.query("DELETE FROM users WHERE tenant_id = \(tenantID) AND id = \(id)")
    }

    static func mapConflict(_ error: PostgresError) -> Error {
        if error.isUniqueViolation(constraint: "users_username_key") { return AccountError.usernameTaken }
        if error.isUniqueViolation(constraint: "users_email_key") { return AccountError.emailTaken }
        return error
    }
}
