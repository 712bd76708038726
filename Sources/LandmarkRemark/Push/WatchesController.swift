import Hummingbird

/// `/v1/me/watches`: the areas the caller hears about. The handlers translate HTTP;
/// `WatchService` does the work.
struct WatchesController {
    let watches: WatchService
    let bodyLimit: Int

    var endpoints: RouteCollection<AppRequestContext> {
        RouteCollection(context: AppRequestContext.self)
            .get(use: list)
            .post(use: create)
            .get(":id", use: show)
            .patch(":id", use: update)
            .delete(":id", use: delete)
    }

    @Sendable func create(_ request: Request, context: AppRequestContext) async throws -> EditedResponse<Watch> {
        var request = request
        let identity = try context.requireIdentity()
        let draft = try await request.decode(WatchDraft.self, rules: watches.rules, context: context, limit: bodyLimit)
        let watch = try await watches.create(draft, by: identity, logger: context.logger)
        return EditedResponse(status: .created, headers: [.location: "/v1/me/watches/\(watch.id)"], response: watch)
    }

    @Sendable func list(_ request: Request, context: AppRequestContext) async throws -> WatchList {
        try QueryParameters(query: request.uri.query).finish()
        return try await watches.list(for: try context.requireIdentity(), logger: context.logger)
    }

    @Sendable func show(_ request: Request, context: AppRequestContext) async throws -> Watch {
        try await watches.find(try context.resourceID(else: PushError.watchNotFound), for: try context.requireIdentity(), logger: context.logger)
    }

    @Sendable func update(_ request: Request, context: AppRequestContext) async throws -> Watch {
        var request = request
        let identity = try context.requireIdentity()
        let id = try context.resourceID(else: PushError.watchNotFound)
        let patch = try await request.decode(WatchPatch.self, rules: watches.rules, context: context, limit: bodyLimit)
        return try await watches.update(id, with: patch, by: identity, logger: context.logger)
    }

    @Sendable func delete(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        try await watches.delete(try context.resourceID(else: PushError.watchNotFound), by: try context.requireIdentity(), logger: context.logger)
        return .noContent
    }
}
