import Credentials
import Foundation
import Photos
import Postgres

/// Photos' statements: their rows and their variants' bytes. Every call runs inside the
/// caller's tenant transaction or reads and names the tenant too, so `(tenant_id, …)` keys
/// serve it. What a photo is on decides who sees it: a note's photo is seen by exactly those
/// who see the note (`Audience.seesNote`, over `tenant_notes`, which hides disabled authors).
struct PhotoStore: Sendable {
    /// Whether `viewer` may add or remove a photo of a note or place now, locking it until
    /// the transaction ends (so two uploads cannot both take its last free place).
    enum Target: Sendable, Equatable {
        /// The caller may, and these are its photos as it keeps them (`PhotoSummaries`).
        case allowed(photos: [Int64])
        /// Invisible to the viewer, or no such note or place.
        case notFound
        /// Visible but not the caller's to change.
        case notAuthor
    }

    /// Says whether `viewer` may add or remove the photos of what a photo is (to be) on: a
    /// note's author; a custom place's creator, a default place's moderators. `locking`, it
    /// stays locked until the transaction ends; without, it is only a look (the check before
    /// a decode, which the store's own transaction repeats with the lock).
    func photoTarget(
        _ holder: PhotoHolder, tenantID: Int64, viewerID: Int64, locking: Bool = true, on connection: some PostgresQuerying
    ) async throws -> Target {
        switch holder {
        case .note(let noteID):
            let rows = try await connection.query("""
                SELECT n.user_id = \(viewerID), \(Audience.seesNote("n", tenantID: tenantID, viewerID: viewerID)), n.photos
                FROM notes n
                JOIN users u ON u.tenant_id = \(tenantID) AND u.id = n.user_id
                WHERE n.tenant_id = \(tenantID) AND n.id = \(noteID) AND u.disabled_at IS NULL
                \(locking ? "FOR UPDATE OF n" : "" as PostgresQuery)
                """)
            return try Self.target(rows.first)
        case .place(let placeID):
            let rows = try await connection.query("""
                SELECT CASE p.kind WHEN 'custom' THEN p.created_by IS NOT DISTINCT FROM \(viewerID)
                       ELSE coalesce((SELECT m.moderator FROM users m
                                      WHERE m.tenant_id = \(tenantID) AND m.id = \(viewerID) AND m.disabled_at IS NULL), false) END,
                       \(Audience.seesPlace("p", tenantID: tenantID, viewerID: viewerID)), p.photos
                FROM places p
                WHERE p.tenant_id = \(tenantID) AND p.id = \(placeID)
                \(locking ? "FOR UPDATE OF p" : "" as PostgresQuery)
                """)
            return try Self.target(rows.first)
        }
    }

    /// A lock's row: may change, sees, photos.
    private static func target(_ row: PostgresRow?) throws -> Target {
        guard let row else { return .notFound }
        if try row.decode(Bool.self, column: 0) { return .allowed(photos: try row.decode([Int64].self, column: 2)) }
        return try row.decode(Bool.self, column: 1) ? .notAuthor : .notFound
    }

    /// Stores `photo` on what `photoTarget` locked (whose photos were `current`), its variants
    /// with it, and answers it as the API writes it.
    func insert(
        tenantID: Int64, ownerID: Int64, on holder: PhotoHolder, current: [Int64], photo: SanitisedPhoto, on connection: some PostgresQuerying
    ) async throws -> Photo {
        let (noteID, placeID): (Int64?, Int64?) = switch holder {
        case .note(let id): (id, nil)
        case .place(let id): (nil, id)
        }
        let rows = try await connection.query("""
            INSERT INTO photos (tenant_id, owner_id, note_id, place_id, source_format, width, height, stored_bytes)
            VALUES (\(tenantID), \(ownerID), \(noteID), \(placeID), \(photo.source.rawValue), \(photo.width), \(photo.height), \(Int64(photo.storedBytes)))
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
        try await setPhotos(of: holder, tenantID: tenantID, current + added, on: connection)
        return PhotoSummaries.photos(added)[0]
    }

    /// Deletes a photo of `holder`, its variants with it; false when it has no such photo.
    func delete(tenantID: Int64, from holder: PhotoHolder, photoID: Int64, current: [Int64], on connection: some PostgresQuerying) async throws -> Bool {
        let deleted = try await connection.query("""
            DELETE FROM photos WHERE tenant_id = \(tenantID) AND id = \(photoID) AND \(holder.column) = \(holder.id)
            """)
        guard deleted.affectedRows == 1 else { return false }
        try await setPhotos(of: holder, tenantID: tenantID, PhotoSummaries.removing(photoID, from: current), on: connection)
        return true
    }

    /// The photos as the note's (or place's) JSON says them; a change to them is a change to
    /// it (a later `updated_at`, a new ETag, an updated event).
    private func setPhotos(of holder: PhotoHolder, tenantID: Int64, _ numbers: [Int64], on connection: some PostgresQuerying) async throws {
        try await connection.query("""
            UPDATE \(holder.table)
            SET photos = \(numbers), updated_at = greatest(now(), seconds_after(updated_at, 0.000001))
            WHERE tenant_id = \(tenantID) AND id = \(holder.id)
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

    /// A variant's hash and, `withBytes`, its bytes, if `viewer` sees what the photo is on.
    /// Without them the bytes stay where they are (TOAST is not read for a `CASE` not taken).
    func variant(
        tenantID: Int64, photoID: Int64, size: PhotoSize, viewerID: Int64, withBytes: Bool, on reads: some PostgresQuerying
    ) async throws -> (sha256: [UInt8], data: [UInt8]?)? {
        let rows = try await reads.query("""
            SELECT v.sha256, CASE WHEN \(withBytes) THEN v.data END
            FROM photos p
            JOIN photo_variants v ON v.tenant_id = \(tenantID) AND v.photo_id = p.id AND v.variant = \(size.rawValue)
            WHERE p.tenant_id = \(tenantID) AND p.id = \(photoID)
              AND (EXISTS (SELECT FROM tenant_notes n
                           WHERE n.tenant_id = \(tenantID) AND n.id = p.note_id AND \(Audience.seesNote("n", tenantID: tenantID, viewerID: viewerID)))
                   OR EXISTS (SELECT FROM tenant_places pl
                              WHERE pl.tenant_id = \(tenantID) AND pl.id = p.place_id AND \(Audience.seesPlace("pl", tenantID: tenantID, viewerID: viewerID))))
            """)
        guard let row = rows.first else { return nil }
        return (try row.decode(PostgresBytes.self, column: 0).bytes, try row.decode(PostgresBytes?.self, column: 1)?.bytes)
    }

}
