import Credentials
import Foundation
import Photos
import Postgres

/// Photos' statements: their rows and their variants' bytes. Every call runs inside the
/// caller's tenant transaction or reads and names the tenant too, so `(tenant_id, …)` keys
/// serve it. What a photo is on decides who sees it: a note's photo is seen by exactly those
/// who see the note (`Audience.seesNote`, over `tenant_notes`, which hides disabled authors).
struct PhotoStore: Sendable {
    /// Whether `viewer` may add a photo to a note now, locking the note until the
    /// transaction ends (so two uploads cannot both take its last free place).
    enum Target: Sendable, Equatable {
        case allowed(photos: Int)
        /// Invisible to the viewer, or no such note.
        case notFound
        /// Visible but someone else's.
        case notAuthor
    }

    func lockNoteForPhoto(tenantID: Int64, noteID: Int64, viewerID: Int64, on connection: some PostgresQuerying) async throws -> Target {
        let rows = try await connection.query("""
            SELECT n.user_id, \(Audience.seesNote("n", tenantID: tenantID, viewerID: viewerID)),
                   (SELECT count(*) FROM photos p WHERE p.tenant_id = \(tenantID) AND p.note_id = n.id)
            FROM notes n
            JOIN users u ON u.tenant_id = \(tenantID) AND u.id = n.user_id
            WHERE n.tenant_id = \(tenantID) AND n.id = \(noteID) AND u.disabled_at IS NULL
            FOR UPDATE OF n
            """)
        guard let row = rows.first else { return .notFound }
        let author = try row.decode(Int64.self, column: 0)
        if author == viewerID { return .allowed(photos: Int(try row.decode(Int64.self, column: 2))) }
        return try row.decode(Bool.self, column: 1) ? .notAuthor : .notFound
    }

    /// Stores `photo` on the note, its variants with it, and answers it as the API writes it.
    func insert(tenantID: Int64, ownerID: Int64, noteID: Int64, photo: SanitisedPhoto, on connection: some PostgresQuerying) async throws -> Photo {
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
        return Self.photo(id: id, createdAt: createdAt, photo: photo)
    }

    /// The API's view of a stored photo: the variants' URLs are its id and their name.
    static func photo(id: Int64, createdAt: Date, photo: SanitisedPhoto) -> Photo {
        func variant(_ size: PhotoSize) -> PhotoVariant {
            let rendition = photo.variants[size]
            return PhotoVariant(url: "/v1/photos/\(id)/\(size.rawValue)", width: rendition?.width ?? 0, height: rendition?.height ?? 0)
        }
        return Photo(
            id: id, width: photo.width, height: photo.height, createdAt: createdAt,
            variants: PhotoVariants(thumb: variant(.thumb), display: variant(.display), full: variant(.full)))
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

    /// Deletes the note's photo, its variants with it; false when the note has no such photo.
    func delete(tenantID: Int64, noteID: Int64, photoID: Int64, on connection: some PostgresQuerying) async throws -> Bool {
        let deleted = try await connection.query("""
            DELETE FROM photos WHERE tenant_id = \(tenantID) AND id = \(photoID) AND note_id = \(noteID)
            """)
        return deleted.affectedRows == 1
    }
}
