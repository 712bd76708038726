import Foundation
import HTTPTypes
import Hummingbird
import Postgres

/// `/v1/notes` and `/v1/users/{username}/notes`. Every handler runs behind the
/// authenticator, as the caller's tenant: writes in a transaction, reads as pipelined reads.
struct NotesController {
    let services: AppServices
    let store = NoteStore()

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
    @Sendable func create(_ request: Request, context: AppRequestContext) async throws -> Response {
        var request = request
        let identity = try context.requireIdentity()
        let key = try Idempotency.key(from: request)
        let draft = try NoteDraft(try await request.jsonObject(context: context, limit: services.configuration.bodyLimitBytes))
        guard let key else {
            let body = try await services.pool.withTenant(identity.tenantID) { connection in
                try Self.encode(try await store.create(tenantID: identity.tenantID, authorID: identity.userID, draft: draft, on: connection))
            }
            return Self.noteResponse(body.data, status: .created, location: body.location)
        }
        let idempotency = Idempotency(pool: services.pool, tenantID: identity.tenantID, userID: identity.userID)
        switch try await idempotency.claim(key: key, fingerprint: draft.fingerprint) {
        case .replay(let replay):
            var response = Self.noteResponse(
                Data(replay.body.utf8), status: HTTPResponse.Status(code: replay.status), location: replay.location)
            response.headers[.idempotentReplayed] = "true"
            return response
        case .claimed(let claim):
            do {
                let body = try await services.pool.withTenant(identity.tenantID) { connection in
                    let note = try await store.create(tenantID: identity.tenantID, authorID: identity.userID, draft: draft, on: connection)
                    let body = try Self.encode(note)
                    try await idempotency.complete(
                        claim, status: 201, body: String(decoding: body.data, as: UTF8.self), location: body.location, on: connection)
                    return body
                }
                return Self.noteResponse(body.data, status: .created, location: body.location)
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
        let note = try await services.pool.withReads(identity.tenantID) {
            try await store.find(tenantID: identity.tenantID, id: id, viewerID: identity.userID, on: $0)
        }
        guard let note else { throw AppError.notFound("note") }
        let body = try Self.encode(note).data
        let tag = EntityTag.of(body)
        if EntityTag.noneMatchHits(request.headers[.ifNoneMatch], current: tag) {
            return Response(status: .notModified, headers: [.eTag: tag])
        }
        return Self.noteResponse(body, status: .ok, location: nil)
    }

    /// Changes body, visibility or place; only the author, and only if `If-Match` (when sent) is current.
    @Sendable func update(_ request: Request, context: AppRequestContext) async throws -> Response {
        var request = request
        let identity = try context.requireIdentity()
        let id = try Self.noteID(context)
        let patch = try NotePatch(try await request.jsonObject(context: context, limit: services.configuration.bodyLimitBytes))
        let ifMatch = request.headers[.ifMatch]
        let body = try await services.pool.withTenant(identity.tenantID) { connection in
            let current = try await lockAsAuthor(identity, id: id, ifMatch: ifMatch, on: connection)
            if patch.isEmpty { return try Self.encode(current).data }
            let note = try await store.update(tenantID: identity.tenantID, id: id, patch: patch, viewerID: identity.userID, on: connection)
            return try Self.encode(note).data
        }
        return Self.noteResponse(body, status: .ok, location: nil)
    }

    /// Deletes a note; only the author.
    @Sendable func delete(_ request: Request, context: AppRequestContext) async throws -> Response {
        let identity = try context.requireIdentity()
        let id = try Self.noteID(context)
        let ifMatch = request.headers[.ifMatch]
        try await services.pool.withTenant(identity.tenantID) { connection in
            _ = try await lockAsAuthor(identity, id: id, ifMatch: ifMatch, on: connection)
            try await store.delete(tenantID: identity.tenantID, id: id, on: connection)
        }
        return .noContent()
    }

    /// Locks the note for a change: `404` when the caller cannot see it, `403` when it
    /// is someone else's, `412` when `If-Match` names another version.
    private func lockAsAuthor(_ identity: Identity, id: Int64, ifMatch: String?, on connection: PostgresConnection) async throws -> Note {
        switch try await store.lockForChange(tenantID: identity.tenantID, id: id, viewerID: identity.userID, on: connection) {
        case .notFound: throw AppError.notFound("note")
        case .notAuthor: throw AppError.forbidden("only the author of a note can change or delete it")
        case .allowed(let note):
            guard EntityTag.matchHolds(ifMatch, current: EntityTag.of(try Self.encode(note).data)) else {
                throw AppError.preconditionFailed
            }
            return note
        }
    }

    // MARK: - Lists

    /// A page of notes, nearest or newest first.
    @Sendable func list(_ request: Request, context: AppRequestContext) async throws -> Response {
        let identity = try context.requireIdentity()
        var parameters = try QueryParameters(query: request.uri.query)
        let list = try NoteList(&parameters)
        let page = try await services.pool.withReads(identity.tenantID) {
            try await list.page(tenantID: identity.tenantID, viewerID: identity.userID, on: $0)
        }
        return .json(page)
    }

    /// The same list with the author fixed by the path; `404` for an unknown user.
    @Sendable func listByUser(_ request: Request, context: AppRequestContext) async throws -> Response {
        let identity = try context.requireIdentity()
        let username = try context.parameters.require("username")
        guard AccountRules.usernameProblem(username) == nil else { throw AppError.notFound("user") }
        var parameters = try QueryParameters(query: request.uri.query)
        let list = try NoteList(&parameters, author: .username(username))
        let page = try await services.pool.withReads(identity.tenantID) { reads -> NoteList.Page? in
            let user = try await reads.query("""
                SELECT 1 FROM tenant_users
                WHERE tenant_id = \(identity.tenantID) AND lower(username) = lower(\(username)) AND disabled_at IS NULL
                """)
            guard !user.isEmpty else { return nil }
            return try await list.page(tenantID: identity.tenantID, viewerID: identity.userID, on: reads)
        }
        guard let page else { throw AppError.notFound("user") }
        return .json(page)
    }

    /// Notes inside `bbox`, grouped on the map grid of `zoom`.
    @Sendable func clusters(_ request: Request, context: AppRequestContext) async throws -> Response {
        let identity = try context.requireIdentity()
        var parameters = try QueryParameters(query: request.uri.query)
        let clusters = try NoteClusters(&parameters)
        let response = try await services.pool.withReads(identity.tenantID) {
            try await clusters.run(tenantID: identity.tenantID, viewerID: identity.userID, on: $0)
        }
        return try .json(response)
    }

    // MARK: - Helpers

    /// A malformed id names no note the caller could see: `404`, like a missing one.
    private static func noteID(_ context: AppRequestContext) throws -> Int64 {
        guard let text = context.parameters.get("id"), let id = NoteRules.id(text) else { throw AppError.notFound("note") }
        return id
    }

    /// A note's JSON, encoded once so its ETag is the hash of exactly the bytes sent.
    private static func encode(_ note: Note) throws -> (data: Data, location: String) {
        (Data(note.jsonBuffer.readableBytesView), "/v1/notes/\(note.id)")
    }

    private static func noteResponse(_ body: Data, status: HTTPResponse.Status, location: String?) -> Response {
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8", .eTag: EntityTag.of(body)]
        if let location { headers[.location] = location }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}

extension HTTPField.Name {
    /// Set on a response replayed for a repeated `Idempotency-Key`.
    static let idempotentReplayed = Self("Idempotent-Replayed")!
}
