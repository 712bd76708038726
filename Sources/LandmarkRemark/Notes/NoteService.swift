import Logging
import Postgres

/// The notes' workflows: which transaction or reads each runs in, and the steps that span
/// stores (a create with its idempotency key, a change that locks the note first). The
/// stores only run statements on the connection they are given; `NotesController` only
/// translates HTTP.
struct NoteService: Sendable {
    let pool: PostgresPool
    let notes: NoteStore
    let creates: IdempotentCreates
    /// The word lists a write may apply without reading them first.
    let writeRules: WriteRulesCache

    // MARK: - Writes

    /// Creates a note; with an idempotency `key`, a retry gets the first response instead.
    ///
    /// Screened by the tenant's policy (`WriteRulesCache.screened`): with its word list kept
    /// from an earlier write and no key, one round trip (`BEGIN`, the settings, the check that
    /// the rest of the policy holds, the insert and `COMMIT`).
    func create(_ draft: NoteDraft, by identity: Identity, key: String?, logger: Logger) async throws -> NoteResponse {
        let (tenantID, userID) = (identity.tenantID, identity.userID)
        return try await writeRules.screened(draft.body, field: "body", tenantID: tenantID, userID: userID) { screening in
            try await creates.run(key: key, fingerprint: draft.fingerprint, tenantID: tenantID, userID: userID, logger: logger) { connection, last in
                let note = try await notes.create(
                    tenantID: tenantID, authorID: userID, authorName: identity.username, draft: draft,
                    held: try await screening.held(on: connection), on: screening.guarding(last))
                return NoteResponse(note, status: .created, location: "/v1/notes/\(note.id)")
            }
        }
    }

    /// Changes body, visibility or place; only the author, and only if `ifMatch` (when sent) is current.
    ///
    /// Screened as a create is: with the tenant's word list kept, two round trips (the lock,
    /// with `BEGIN` and the settings; then the check, the update and `COMMIT`).
    func update(_ id: Int64, with patch: NotePatch, by identity: Identity, ifMatch: String?, logger: Logger) async throws -> NoteResponse {
        let tenantID = identity.tenantID
        if patch.isEmpty {
            return try await pool.withTenantTransaction(tenantID, logger: logger) { connection in
                NoteResponse(try await lockAsAuthor(identity, id: id, ifMatch: ifMatch, on: connection))
            }
        }
        return try await writeRules.screened(patch.body, field: "body", tenantID: tenantID, userID: identity.userID) { screening in
            try await pool.withTenantTransaction(tenantID, logger: logger) { connection in
                _ = try await lockAsAuthor(identity, id: id, ifMatch: ifMatch, on: connection)
                return NoteResponse(
                    try await notes.update(
                        tenantID: tenantID, id: id, patch: patch, held: try await screening.held(on: connection), viewerID: identity.userID,
                        authorName: identity.username, on: screening.guarding(connection.committing)))
            }
        }
    }

    /// Deletes a note; only the author, and only if `ifMatch` (when sent) is current.
    func delete(_ id: Int64, by identity: Identity, ifMatch: String?, logger: Logger) async throws {
        try await pool.withTenantTransaction(identity.tenantID, logger: logger) { connection in
            _ = try await lockAsAuthor(identity, id: id, ifMatch: ifMatch, on: connection)
            try await notes.delete(tenantID: identity.tenantID, id: id, on: connection.committing)
        }
    }

    /// Locks the note for a change: `404` when the caller cannot see it, `403` when it
    /// is someone else's, `412` when `If-Match` names another version.
    private func lockAsAuthor(_ identity: Identity, id: Int64, ifMatch: String?, on connection: PostgresConnection) async throws -> Note {
        switch try await notes.lockForChange(tenantID: identity.tenantID, id: id, viewerID: identity.userID, on: connection) {
        case .notFound: throw NoteError.notFound
        case .notAuthor: throw NoteError.notAuthor
        case .allowed(let note):
            // The note's JSON and its tag are made only when there is a tag to compare.
            guard ifMatch.map({ EntityTag.matchHolds($0, current: NoteResponse(note).entityTag) }) ?? true else {
                throw NoteError.changedSince
            }
            return note
        }
    }

    // MARK: - Reads (pipelined: each statement its own implicit transaction)

    /// One note, if the caller may see it.
    func find(_ id: Int64, for identity: Identity, logger: Logger) async throws -> Note {
        let note = try await pool.withTenantReads(identity.tenantID, logger: logger) {
            try await notes.find(tenantID: identity.tenantID, id: id, viewerID: identity.userID, on: $0)
        }
        guard let note else { throw NoteError.notFound }
        return note
    }

    /// A page of notes, nearest or newest first.
    func page(_ list: NoteList, for identity: Identity, logger: Logger) async throws -> NotePage {
        try await pool.withTenantReads(identity.tenantID, logger: logger) {
            try await notes.page(list, tenantID: identity.tenantID, viewerID: identity.userID, on: $0)
        }
    }

    /// A page of one author's notes; `404` for a user who is not (or no longer) there.
    func page(_ list: NoteList, by username: String, for identity: Identity, logger: Logger) async throws -> NotePage {
        try await pool.withTenantReads(identity.tenantID, logger: logger) { reads in
            guard try await notes.isActiveAuthor(tenantID: identity.tenantID, username: username, viewerID: identity.userID, on: reads) else {
                throw NoteError.unknownAuthor
            }
            return try await notes.page(list, tenantID: identity.tenantID, viewerID: identity.userID, on: reads)
        }
    }

    /// Notes inside a box, grouped on the map grid of its zoom.
    func clusters(_ request: NoteClusters, for identity: Identity, logger: Logger) async throws -> ClusterList {
        try await pool.withTenantReads(identity.tenantID, logger: logger) {
            try await notes.clusters(request, tenantID: identity.tenantID, viewerID: identity.userID, on: $0)
        }
    }
}
