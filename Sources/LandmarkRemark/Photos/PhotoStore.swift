import Credentials
import Foundation
import Photos
import Postgres

/// Photos' statements: their rows and their variants' bytes. Every call runs inside the
/// caller's tenant transaction or reads and names the tenant too, so `(tenant_id, …)` keys
/// serve it. What a photo is on decides who sees it: a note's photo is seen by exactly those
/// who see the note (`Audience.seesNote`, over `tenant_notes`, which hides disabled authors).
struct PhotoStore: Sendable {
    /// Whether `viewer` may add or remove a photo of a note now, locking the note until the
    /// transaction ends (so two uploads cannot both take its last free place).
    enum Target: Sendable, Equatable {
        /// The caller's note, with its photos as it keeps them (`PhotoSummaries`).
        case allowed(photos: [Int64])
        /// Invisible to the viewer, or no such note.
        case notFound
        /// Visible but someone else's.
        case notAuthor
    }

    func lockNoteForPhoto(tenantID: Int64, noteID: Int64, viewerID: Int64, on connection: some PostgresQuerying) async throws -> Target {
        let rows = try await connection.query("""
            SELECT n.user_id, \(Audience.seesNote("n", tenantID: tenantID, viewerID: viewerID)), n.photos
            FROM notes n
            JOIN users u ON u.tenant_id = \(tenantID) AND u.id = n.user_id
            WHERE n.tenant_id = \(tenantID) AND n.id = \(noteID) AND u.disabled_at IS NULL
            FOR UPDATE OF n
            """)
        guard let row = rows.first else { return .notFound }
        let author = try row.decode(Int64.self, column: 0)
        if author == viewerID { return .allowed(photos: try row.decode([Int64].self, column: 2)) }
        return try row.decode(Bool.self, column: 1) ? .notAuthor : .notFound
    }

    /// Stores `photo` on the note locked with `lockNoteForPhoto` (whose photos were `current`),
    /// its variants with it, and answers it as the API writes it.
    func insert(
        tenantID: Int64, ownerID: Int64, noteID: Int64, current: [Int64], photo: SanitisedPhoto, on connection: some PostgresQuerying
    ) async throws -> Photo {
        let stored = photo.variants.values.reduce(0) { $0 + $1.bytes.count }
        let rows = try await connection.query("""
            INSERT INTO photos (tenant_id, owner_id, note_id, source_format, width, height, stored_bytes)
            VALUES (\(tenantID), \(ownerID), \(noteID), \(photo.source.rawValue), \(photo.width), \(photo.height), \(Int64(stored)))
            RETURNING id, created_at
            """)
        let id = try rows[0].decode(Int64.self, column: 0)
        let createdAt = try rows[0].decode(Date.self, column: 1)
        for size in PhotoSize.allCases {
            guard let rendition = photo.variants[size] else { continue }
            try await connection.query("""
                INSERT INTO photo_variants (tenant_id, photo_id, variant, width, height, sha256, data)
                VALUES (\(tenantID), \(id), \(size.rawValue), \(rendition.width), \(rendition.height),
                        \(PostgresBytes(Tokens.sha256(rendition.bytes))), \(PostgresBytes(rendition.bytes)))
                """)
        }
        let added = PhotoSummaries.numbers(id: id, createdAt: createdAt, photo: photo)
        try await setNotePhotos(tenantID: tenantID, noteID: noteID, current + added, on: connection)
        return PhotoSummaries.photos(added)[0]
    }

    /// Deletes the note's photo, its variants with it; false when the note has no such photo.
    func delete(tenantID: Int64, noteID: Int64, photoID: Int64, current: [Int64], on connection: some PostgresQuerying) async throws -> Bool {
        let deleted = try await connection.query("""
            DELETE FROM photos WHERE tenant_id = \(tenantID) AND id = \(photoID) AND note_id = \(noteID)
            """)
        guard deleted.affectedRows == 1 else { return false }
        try await setNotePhotos(tenantID: tenantID, noteID: noteID, PhotoSummaries.removing(photoID, from: current), on: connection)
        return true
    }

    /// The note's photos as its JSON says them; a change to them is a change to the note
    /// (a later `updated_at`, a new ETag, a note.updated event).
    private func setNotePhotos(tenantID: Int64, noteID: Int64, _ numbers: [Int64], on connection: some PostgresQuerying) async throws {
        try await connection.query("""
            UPDATE notes
            SET photos = \(numbers), updated_at = greatest(now(), seconds_after(updated_at, 0.000001))
            WHERE tenant_id = \(tenantID) AND id = \(noteID)
            """)
    }

    /// The bytes `userID` and their tenant keep in photos (`photo_usage`, kept by a trigger).
    func usage(tenantID: Int64, userID: Int64, on connection: some PostgresQuerying) async throws -> (user: Int, tenant: Int) {
        let rows = try await connection.query("""
            SELECT coalesce((SELECT bytes FROM photo_usage WHERE tenant_id = \(tenantID) AND user_id = \(userID)), 0),
                   coalesce((SELECT bytes FROM tenant_photo_usage WHERE tenant_id = \(tenantID)), 0)
            """)
        return (Int(try rows[0].decode(Int64.self, column: 0)), Int(try rows[0].decode(Int64.self, column: 1)))
    }

    /// A variant's bytes and hash, if `viewer` sees what the photo is on.
    func variant(tenantID: Int64, photoID: Int64, size: PhotoSize, viewerID: Int64, on reads: some PostgresQuerying) async throws -> (sha256: [UInt8], data: [UInt8])? {
        let rows = try await reads.query("""
            SELECT v.sha256, v.data
            FROM photos p
            JOIN photo_variants v ON v.tenant_id = \(tenantID) AND v.photo_id = p.id AND v.variant = \(size.rawValue)
            JOIN tenant_notes n ON n.tenant_id = \(tenantID) AND n.id = p.note_id
            WHERE p.tenant_id = \(tenantID) AND p.id = \(photoID)
              AND \(Audience.seesNote("n", tenantID: tenantID, viewerID: viewerID))
            """)
        guard let row = rows.first else { return nil }
        return (try row.decode(PostgresBytes.self, column: 0).bytes, try row.decode(PostgresBytes.self, column: 1).bytes)
    }

}
