import HTTPTypes
import Hummingbird

/// `/v1/notes` and `/v1/users/{username}/notes`, behind the authenticator: each handler
/// reads the request's parts, calls `NoteService` (where the transactions and workflows
/// are) as the caller, and says what the answer is in HTTP.
struct NotesController {
    let notes: NoteService
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
        let key = try IdempotencyKey.parse(request.headers)
        let draft = try await request.decode(NoteDraft.self, context: context, limit: bodyLimit)
        return try await notes.create(draft, by: identity, key: key, logger: context.logger)
    }

    /// One note, if the caller may see it; `304` when `If-None-Match` has its tag.
    @Sendable func show(_ request: Request, context: AppRequestContext) async throws -> Response {
        let identity = try context.requireIdentity()
        let response = NoteResponse(try await notes.find(try context.resourceID(else: NoteError.notFound), for: identity, logger: context.logger))
        if EntityTag.noneMatchHits(request.headers[.ifNoneMatch], current: response.entityTag) {
            return Response(status: .notModified, headers: [.eTag: response.entityTag])
        }
        return try response.response(from: request, context: context)
    }

    /// Changes body, visibility or place; only the author, and only if `If-Match` (when sent) is current.
    @Sendable func update(_ request: Request, context: AppRequestContext) async throws -> NoteResponse {
        var request = request
        let identity = try context.requireIdentity()
        let id = try context.resourceID(else: NoteError.notFound)
        let patch = try await request.decode(NotePatch.self, context: context, limit: bodyLimit)
        return try await notes.update(id, with: patch, by: identity, ifMatch: request.headers[.ifMatch], logger: context.logger)
    }

    /// Deletes a note; only the author.
    @Sendable func delete(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        let identity = try context.requireIdentity()
        try await notes.delete(try context.resourceID(else: NoteError.notFound), by: identity, ifMatch: request.headers[.ifMatch], logger: context.logger)
        return .noContent
    }

    // MARK: - Lists

    /// A page of notes, nearest or newest first.
    @Sendable func list(_ request: Request, context: AppRequestContext) async throws -> NotePage {
        let identity = try context.requireIdentity()
        var parameters = try QueryParameters(query: request.uri.query)
        return try await notes.page(try NoteList(&parameters), for: identity, logger: context.logger)
    }

    /// The same list with the author fixed by the path; `404` for an unknown user.
    @Sendable func listByUser(_ request: Request, context: AppRequestContext) async throws -> NotePage {
        let identity = try context.requireIdentity()
        let username = try context.parameters.require("username")
        guard Username.problem(username) == nil else { throw NoteError.unknownAuthor }
        var parameters = try QueryParameters(query: request.uri.query)
        let list = try NoteList(&parameters, author: .username(username))
        return try await notes.page(list, by: username, for: identity, logger: context.logger)
    }

    /// Notes inside `bbox`, grouped on the map grid of `zoom`.
    @Sendable func clusters(_ request: Request, context: AppRequestContext) async throws -> ClusterList {
        let identity = try context.requireIdentity()
        var parameters = try QueryParameters(query: request.uri.query)
        return try await notes.clusters(try NoteClusters(&parameters), for: identity, logger: context.logger)
    }
}
