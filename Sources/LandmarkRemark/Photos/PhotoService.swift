import Credentials
import Logging
import Photos
import Postgres

/// The photos' workflows. An upload is checked against its note before any work (so a
/// stranger's upload costs a read, not a decode), sanitised outside any transaction (a
/// decode takes up to seconds), and stored in a transaction that checks the note again.
struct PhotoService: Sendable {
    let pool: PostgresPool
    let photos: PhotoStore
    let sanitiser: PhotoSanitiser
    let creates: IdempotentCreates
    let shares: FairShares
    let limits: Limits

    /// What one note, one user and one tenant may have (`PhotoSettings`).
    struct Limits: Sendable {
        var perNote: Int
        var bytesPerUser: Int
        var bytesPerTenant: Int
    }

    func upload(_ bytes: [UInt8], to holder: PhotoHolder, by identity: Identity, key: String?, logger: Logger) async throws -> StoredJSONResponse {
        let (tenantID, userID) = (identity.tenantID, identity.userID)
        // Before the work: the note is the caller's and has room, and so have their quotas.
        // With a key, a full note may be full of this very upload's first try, which the key
        // replays below.
        do {
            try await pool.withTenantTransaction(tenantID, logger: logger) { connection in
                _ = try check(try await photos.photoTarget(holder, tenantID: tenantID, viewerID: userID, locking: false, on: connection), holder)
                try await checkQuotas(adding: 1, tenantID: tenantID, userID: userID, on: connection)
            }
        } catch PhotoRefusal.tooManyPhotos where key != nil {
        } catch PhotoRefusal.quotaExceeded where key != nil {}
        // Outside any transaction: a decode takes up to seconds, and holds no connection or lock.
        let sanitised: SanitisedPhoto
        do {
            sanitised = try await shares.withPhotoShare { try await sanitiser.sanitise(bytes) }
        } catch let error as PhotoError {
            switch error {
            case .unreadable(let why): logger.notice("photo refused", metadata: ["reason": "\(why)", "bytes": "\(bytes.count)"])
            case .sandboxUnavailable(let why): logger.error("photo worker unavailable", metadata: ["reason": "\(why)"])
            default: break
            }
            throw error
        }
        let fingerprint = Tokens.sha256(Array("\(holder):".utf8) + bytes)
        return try await creates.run(key: key, fingerprint: fingerprint, tenantID: tenantID, userID: userID, logger: logger) { connection, _ in
            let current = try check(try await photos.photoTarget(holder, tenantID: tenantID, viewerID: userID, on: connection), holder)
            // Checked again with the photo's own size. Two uploads at once may both pass and
            // overshoot a quota by one photo each: a user uploads one at a time (their share
            // of the workers), and a tenant's quota is not worth a lock every upload waits on.
            try await checkQuotas(
                adding: sanitised.storedBytes, tenantID: tenantID, userID: userID, on: connection)
            let photo = try await photos.insert(
                tenantID: tenantID, ownerID: userID, on: holder, current: current, photo: sanitised, on: connection)
            return StoredJSONResponse(photo, status: .created)
        }
    }

    /// A variant's hash and, `withBytes`, its bytes, if the caller sees what the photo is on.
    func variant(
        _ photoID: Int64, size: PhotoSize, for identity: Identity, withBytes: Bool, logger: Logger
    ) async throws -> (sha256: [UInt8], data: [UInt8]?) {
        let found = try await pool.withTenantReads(identity.tenantID, logger: logger) {
            try await photos.variant(
                tenantID: identity.tenantID, photoID: photoID, size: size, viewerID: identity.userID, withBytes: withBytes, on: $0)
        }
        guard let found else { throw PhotoRefusal.notFound }
        return found
    }

    /// Removes a photo from a note or place the caller may change.
    func delete(_ photoID: Int64, from holder: PhotoHolder, by identity: Identity, logger: Logger) async throws {
        try await pool.withTenantTransaction(identity.tenantID, logger: logger) { connection in
            let current = try Self.photos(
                of: try await photos.photoTarget(holder, tenantID: identity.tenantID, viewerID: identity.userID, on: connection), holder)
            guard try await photos.delete(tenantID: identity.tenantID, from: holder, photoID: photoID, current: current, on: connection) else {
                throw PhotoRefusal.notFound
            }
        }
    }

    /// Refuses a photo of `bytes` that would take the user or the tenant past their quota.
    private func checkQuotas(adding bytes: Int, tenantID: Int64, userID: Int64, on connection: PostgresConnection) async throws {
        let used = try await photos.usage(tenantID: tenantID, userID: userID, on: connection)
        if used.user + bytes > limits.bytesPerUser { throw PhotoRefusal.quotaExceeded(.user, limit: limits.bytesPerUser) }
        if used.tenant + bytes > limits.bytesPerTenant { throw PhotoRefusal.quotaExceeded(.tenant, limit: limits.bytesPerTenant) }
    }

    /// Its photos, if the caller may add one.
    private func check(_ target: PhotoStore.Target, _ holder: PhotoHolder) throws -> [Int64] {
        let current = try Self.photos(of: target, holder)
        if current.count / PhotoSummaries.stride >= limits.perNote { throw PhotoRefusal.tooManyPhotos(limit: limits.perNote) }
        return current
    }

    /// Its photos, if the caller may change them: else not found, or forbidden.
    private static func photos(of target: PhotoStore.Target, _ holder: PhotoHolder) throws -> [Int64] {
        switch target {
        case .notFound: throw holder.notFound
        case .notAuthor: throw holder.forbidden
        case .allowed(let current): return current
        }
    }
}
