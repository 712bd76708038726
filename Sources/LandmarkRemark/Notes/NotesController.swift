import HTTPTypes
import Hummingbird
import Postgres

/// `/v1/notes` and `/v1/users/{username}/notes`. Every handler runs behind the
/// authenticator, as the caller's tenant: writes in a transaction, reads as pipelined reads.
struct NotesController {
    let pool: PostgresPool
    let store: NoteStore
    let bodyLimit: Int

    /// Mounted at `/v1/notes`. The constant `clusters` outranks the `:id` capture in
    /// Hummingbird's trie, so `/v1/notes/clusters` never reaches `get(:id)`.
    var endpoints: RouteCollection<AppRequestContext> {
        RouteCollection(context: AppRequestContext.self)
            .get(use: list)
            .post(use: create)
            .get("clusters", use: clusters)
            .get(":id", use: show)
            .patch(":id", use: update)
            .delete(":id", use: delete)
    }

    /// Mounted at `/v1/users`.
    var userEndpoints: RouteCollection<AppRequestContext> {
        RouteCollection(context: AppRequestContext.self)
            .get(":username/notes", use: listByUser)
    }

    // MARK: - Single notes

    /// Creates a note; with `Idempotency-Key`, a retry gets the first response instead.
    @Sendable func create(_ request: Request, context: AppRequestContext) async throws -> NoteResponse {
        var request = request
        let identity = try context.requireIdentity()
        let key = try Self.idempotencyKey(request)
        let draft = try await request.decode(NoteDraft.self, context: context, limit: bodyLimit)
        let create: (PostgresConnection) async throws -> NoteResponse = { connection in
            let note = try await store.create(tenantID: identity.tenantID, authorID: identity.userID, authorName: identity.username, draft: draft, on: connection)
            return NoteResponse(note, status: .created, location: "/v1/notes/\(note.id)")
        }
        guard let key else { return try await pool.withTenantTransaction(identity.tenantID, logger: context.logger, create) }
        let idempotency = IdempotencyStore(pool: pool, tenantID: identity.tenantID, userID: identity.userID, logger: context.logger)
        switch try await idempotency.claim(key: key, fingerprint: draft.fingerprint) {
        case .replay(let replay):
            return NoteResponse(
                body: Array(replay.body.utf8), status: HTTPResponse.Status(code: replay.status), location: replay.location, replayed: true)
        case .claimed(let claim):
            do {
                return try await pool.withTenantTransaction(identity.tenantID, logger: context.logger) { connection in
                    let response = try await create(connection)
                    try await idempotency.complete(
                        claim, status: 201, body: String(decoding: response.body, as: UTF8.self), location: response.location, on: connection)
                    return response
                }
            } catch {
                await idempotency.release(claim)
                throw error
            }
        }
    }

    /// One note, if the caller may see it; `304` when `If-None-Match` has its tag.
    @Sendable func show(_ request: Request, context: AppRequestContext) async throws -> Response {
        let identity = try context.requireIdentity()
        let id = try Self.noteID(context)
        let note = try await pool.withTenantReads(identity.tenantID, logger: context.logger) {
            try await store.find(tenantID: identity.tenantID, id: id, viewerID: identity.userID, on: $0)
        }
        guard let note else { throw NoteError.notFound }
        let response = NoteResponse(note)
        if EntityTag.noneMatchHits(request.headers[.ifNoneMatch], current: response.entityTag) {
            return Response(status: .notModified, headers: [.eTag: response.entityTag])
        }
        return try response.response(from: request, context: context)
    }

    /// Changes body, visibility or place; only the author, and only if `If-Match` (when sent) is current.
    @Sendable func update(_ request: Request, context: AppRequestContext) async throws -> NoteResponse {
        var request = request
        let identity = try context.requireIdentity()
        let id = try Self.noteID(context)
        let patch = try await request.decode(NotePatch.self, context: context, limit: bodyLimit)
        let ifMatch = request.headers[.ifMatch]
        return try await pool.withTenantTransaction(identity.tenantID, logger: context.logger) { connection in
            let current = try await lockAsAuthor(identity, id: id, ifMatch: ifMatch, on: connection)
            if patch.isEmpty { return NoteResponse(current) }
            return NoteResponse(
                try await store.update(tenantID: identity.tenantID, id: id, patch: patch, viewerID: identity.userID, authorName: identity.username, on: connection))
        }
    }

    /// Deletes a note; only the author.
    @Sendable func delete(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        let identity = try context.requireIdentity()
        let id = try Self.noteID(context)
        let ifMatch = request.headers[.ifMatch]
        try await pool.withTenantTransaction(identity.tenantID, logger: context.logger) { connection in
            _ = try await lockAsAuthor(identity, id: id, ifMatch: ifMatch, on: connection)
            try await store.delete(tenantID: identity.tenantID, id: id, on: connection)
        }
        return .noContent
    }

    /// Locks the note for a change: `404` when the caller cannot see it, `403` when it
    /// is someone else's, `412` when `If-Match` names another version.
    private func lockAsAuthor(_ identity: Identity, id: Int64, ifMatch: String?, on connection: PostgresConnection) async throws -> Note {
        switch try await store.lockForChange(tenantID: identity.tenantID, id: id, viewerID: identity.userID, on: connection) {
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

    // MARK: - Lists

    /// A page of notes, nearest or newest first.
    @Sendable func list(_ request: Request, context: AppRequestContext) async throws -> Page<Note> {
        let identity = try context.requireIdentity()
        var parameters = try QueryParameters(query: request.uri.query)
        let list = try NoteList(&parameters)
        return try await pool.withTenantReads(identity.tenantID, logger: context.logger) {
            try await store.page(list, tenantID: identity.tenantID, viewerID: identity.userID, on: $0)
        }
    }

    /// The same list with the author fixed by the path; `404` for an unknown user.
    @Sendable func listByUser(_ request: Request, context: AppRequestContext) async throws -> Page<Note> {
        let identity = try context.requireIdentity()
        let username = try context.parameters.require("username")
        guard Username.problem(username) == nil else { throw NoteError.unknownAuthor }
        var parameters = try QueryParameters(query: request.uri.query)
        let list = try NoteList(&parameters, author: .username(username))
        return try await pool.withTenantReads(identity.tenantID, logger: context.logger) { reads in
            guard try await store.isActiveAuthor(tenantID: identity.tenantID, username: username, on: reads) else {
                throw NoteError.unknownAuthor
            }
            return try await store.page(list, tenantID: identity.tenantID, viewerID: identity.userID, on: reads)
        }
    }

    /// Notes inside `bbox`, grouped on the map grid of `zoom`.
    @Sendable func clusters(_ request: Request, context: AppRequestContext) async throws -> NoteClusters.Response {
        let identity = try context.requireIdentity()
        var parameters = try QueryParameters(query: request.uri.query)
        let clusters = try NoteClusters(&parameters)
        return try await pool.withTenantReads(identity.tenantID, logger: context.logger) {
            try await store.clusters(clusters, tenantID: identity.tenantID, viewerID: identity.userID, on: $0)
        }
    }

    // MARK: - Request parts

    /// A malformed id names no note the caller could see: `404`, like a missing one.
    private static func noteID(_ context: AppRequestContext) throws -> Int64 {
        guard let text = context.parameters.get("id"), let id = ResourceID.parse(text) else { throw NoteError.notFound }
        return id
    }

    /// `Idempotency-Key`: 1–255 printable ASCII characters, else `400`.
    private static func idempotencyKey(_ request: Request) throws -> String? {
        guard let key = request.headers[.idempotencyKey] else { return nil }
        guard (1...255).contains(key.utf8.count), key.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else {
            throw AppError.malformed("Idempotency-Key must be 1 to 255 printable characters")
        }
        return key
    }
}
