import Foundation
import Postgres

/// Single-note reads and writes. Every call runs inside the caller's tenant
/// transaction and names the tenant too, so the `(tenant_id, id)` key serves it.
/// Reads go through `tenant_notes`/`tenant_users` (migration 0004); writes go to
/// the tables under row-level security.
struct NoteStore: Sendable {
    /// Which list statements run as functions on the tenant's worker (on Citus).
    let workerReads = WorkerReads()
    /// How many authors matched by name a search hands its statement as ids (`resolvingUsernames`).
    static let namesResolvedUpFront = 200

    /// Why a note cannot be changed by this caller.
    enum Access: Sendable {
        case allowed(Note)
        /// Invisible to the caller: another's private note, or no such note.
        case notFound
        /// Visible but someone else's.
        case notAuthor
    }

    /// The columns `note(from:viewer:)` reads, in order, over `n` (notes) and `u` (users).
    /// The location is read as geometry so `ST_X`/`ST_Y` give the stored degrees back unchanged.
    static let noteColumns: PostgresQuery = """
        n.id, n.body, ST_Y(n.location::geometry), ST_X(n.location::geometry), n.user_id, u.username,
        n.visibility, n.place_id, n.created_at, n.updated_at, n.moderation, n.photos
        """

    /// How many columns `noteColumns` selects; list queries append their sort keys after them.
    static let noteColumnCount = 12

    /// Decodes the first `columnCount` columns of `row`, as seen by the user `viewer`.
    static func note(from row: PostgresRow, viewer: Int64) throws -> Note {
        // Column by column with concrete types, not `row.decode((…).self)`: the
        // tuple form's parameter pack is not specialised and fetched generic
        // metadata for every cell, a tenth of a list request's CPU.
        let id = try row.decode(Int64.self, column: 0)
        let body = try row.decode(String.self, column: 1)
        let lat = try row.decode(Double.self, column: 2)
        let lng = try row.decode(Double.self, column: 3)
        let userID = try row.decode(Int64.self, column: 4)
        let author = UserSummary(id: userID, username: try row.decode(String.self, column: 5))
        // The table's CHECK allows only these two.
        let visibility = Visibility(rawValue: try row.decode(String.self, column: 6)) ?? .private
        let placeID = try row.decode(Int64?.self, column: 7)
        let createdAt = try row.decode(Date.self, column: 8)
        let updatedAt = try row.decode(Date.self, column: 9)
        let moderation = try row.decode(String?.self, column: 10).flatMap(Note.Moderation.init(rawValue:))
        let photos = PhotoSummaries.photos(try row.decode([Int64].self, column: 11))
        return Note(
            id: id, body: body, lat: lat, lng: lng, author: author, isMine: userID == viewer, visibility: visibility,
            placeID: placeID, createdAt: createdAt, updatedAt: updatedAt, moderation: moderation, photos: photos)
    }

    /// The note if `viewer` may see it (public or their own, by no one blocked either way).
    func find(tenantID: Int64, id: Int64, viewerID: Int64, on connection: some PostgresQuerying) async throws -> Note? {
        let rows = try await connection.query("""
            SELECT \(Self.noteColumns)
            FROM tenant_notes n
            JOIN tenant_users u ON u.tenant_id = \(tenantID) AND u.id = n.user_id
            WHERE n.tenant_id = \(tenantID) AND n.id = \(id)
              AND \(Audience.seesNote("n", tenantID: tenantID, viewerID: viewerID))
            """)
        return try rows.first.map { try Self.note(from: $0, viewer: viewerID) }
    }

    /// Locks the note for a change by `viewer` and says whether they may make it. A disabled
    /// author's note is not found, as `tenant_notes` hides it from every read; nor is any note
    /// `Audience` hides from the viewer.
    func lockForChange(tenantID: Int64, id: Int64, viewerID: Int64, on connection: some PostgresQuerying) async throws -> Access {
        let rows = try await connection.query("""
            SELECT \(Self.noteColumns), \(Audience.seesNote("n", tenantID: tenantID, viewerID: viewerID))
            FROM notes n
            JOIN users u ON u.tenant_id = \(tenantID) AND u.id = n.user_id
            WHERE n.tenant_id = \(tenantID) AND n.id = \(id) AND u.disabled_at IS NULL
            FOR UPDATE OF n
            """)
        guard let row = rows.first else { return .notFound }
        let note = try Self.note(from: row, viewer: viewerID)
        if note.isMine { return .allowed(note) }
        let seen = try row.decode(Bool.self, column: Self.noteColumnCount)
        return seen ? .notAuthor : .notFound
    }

    /// Inserts a note by `authorID` (whose username is `authorName`), `held` for a moderator
    /// when the tenant's word list says so; an unknown place is `NoteError.unknownPlace`.
    func create(
        tenantID: Int64, authorID: Int64, authorName: String, draft: NoteDraft, held: Bool = false, on connection: some PostgresQuerying
    ) async throws -> Note {
        let rows = try await mappingPlaceError {
            try await connection.query("""
                INSERT INTO notes (tenant_id, user_id, body, location, visibility, place_id, moderation)
                VALUES (\(tenantID), \(authorID), \(draft.body)::text,
                        ST_SetSRID(ST_MakePoint(\(draft.lng)::float8, \(draft.lat)::float8), 4326)::geography,
                        \(draft.visibility.rawValue)::text, \(draft.placeID)::bigint, \(held ? "pending" : nil)::text)
                RETURNING \(Self.returnedColumns(authorName: authorName))
                """)
        }
        return try Self.note(from: rows[0], viewer: authorID)
    }

    /// `noteColumns` in a write's RETURNING, for a note by `authorName`. A write answers with
    /// the author's name as the caller knows it rather than by a join: on Citus a join over
    /// the written rows makes the write and the read two trips to the worker.
    static func returnedColumns(authorName: String) -> PostgresQuery {
        """
        id, body, ST_Y(location::geometry), ST_X(location::geometry), user_id, \(authorName)::text,
        visibility, place_id, created_at, updated_at, moderation, photos
        """
    }

    /// Applies a patch to a note already locked with `lockForChange`; `held`: its new body is
    /// held for a moderator.
    /// Only its author changes a note, so `authorName` is the caller's.
    func update(
        tenantID: Int64, id: Int64, patch: NotePatch, held: Bool = false, viewerID: Int64, authorName: String,
        on connection: some PostgresQuerying
    ) async throws -> Note {
        let placeChanges = patch.placeID != nil
        let rows = try await mappingPlaceError {
            try await connection.query("""
                UPDATE notes
                SET body = coalesce(\(patch.body), body),
                    visibility = coalesce(\(patch.visibility?.rawValue), visibility),
                    place_id = CASE WHEN \(placeChanges) THEN \(patch.placeID ?? nil) ELSE place_id END,
                    moderation = CASE WHEN \(held) THEN 'pending' ELSE moderation END,
                    -- Later than before, always (an ETag changes with every edit), and no
                    -- volatile function, which Citus refuses in an UPDATE.
                    updated_at = greatest(now(), seconds_after(updated_at, 0.000001))
                WHERE tenant_id = \(tenantID) AND id = \(id)
                RETURNING \(Self.returnedColumns(authorName: authorName))
                """)
        }
        guard let row = rows.first else { throw NoteError.notFound }
        return try Self.note(from: row, viewer: viewerID)
    }

    /// Whether `username` names an active user `Audience` does not hide, ignoring case:
    /// `/v1/users/{username}/notes` is `404` for anyone else, where a filter alone would
    /// answer an empty page.
    func isActiveAuthor(tenantID: Int64, username: String, viewerID: Int64, on reads: some PostgresQuerying) async throws -> Bool {
        let rows = try await reads.query("""
            SELECT 1 FROM tenant_users
            WHERE tenant_id = \(tenantID) AND lower(username) = lower(\(username)) AND disabled_at IS NULL
              AND id NOT IN \(Audience.hiddenUsers(tenantID: tenantID, viewerID: viewerID))
            """)
        return !rows.isEmpty
    }

    func delete(tenantID: Int64, id: Int64, on connection: some PostgresQuerying) async throws {
        try await connection.query("DELETE FROM notes WHERE tenant_id = \(tenantID) AND id = \(id)")
    }

    /// The foreign key on `(tenant_id, place_id)` is the check that the place exists in
    /// this tenant, race-free; its violation is the client's mistake, not ours.
    private func mappingPlaceError<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as PostgresError where error.isForeignKeyViolation(constraint: "notes_tenant_id_place_id_fkey") {
            throw NoteError.unknownPlace
        }
    }
}
