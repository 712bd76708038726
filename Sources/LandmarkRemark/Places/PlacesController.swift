import Hummingbird

/// `/v1/places`: default places from the operator, custom ones from users. The handlers
/// translate HTTP; `PlaceService` does the work.
struct PlacesController {
    let places: PlaceService
    let bodyLimit: Int

    var endpoints: RouteCollection<AppRequestContext> {
        RouteCollection(context: AppRequestContext.self)
            .get(use: list)
            .post(use: create)
            .get(":id", use: show)
            .patch(":id", use: rename)
            .delete(":id", use: delete)
    }

    @Sendable func create(_ request: Request, context: AppRequestContext) async throws -> EditedResponse<Place> {
        var request = request
        let identity = try context.requireIdentity()
        let draft = try await request.decode(PlaceDraft.self, context: context, limit: bodyLimit)
        let place = try await places.create(draft, by: identity, logger: context.logger)
        return EditedResponse(status: .created, headers: [.location: "/v1/places/\(place.id)"], response: place)
    }

    @Sendable func list(_ request: Request, context: AppRequestContext) async throws -> PlacePage {
        let identity = try context.requireIdentity()
        var parameters = try QueryParameters(query: request.uri.query)
        return try await places.page(try PlaceList(&parameters), for: identity, logger: context.logger)
    }

    @Sendable func show(_ request: Request, context: AppRequestContext) async throws -> Place {
        try await places.find(try context.resourceID(else: PlaceError.notFound), for: try context.requireIdentity(), logger: context.logger)
    }

    /// Renames a custom place; only its creator may, and default places not at all.
    @Sendable func rename(_ request: Request, context: AppRequestContext) async throws -> Place {
        var request = request
        let identity = try context.requireIdentity()
        let id = try context.resourceID(else: PlaceError.notFound)
        let body = try await request.decode(PlaceRename.self, context: context, limit: bodyLimit)
        return try await places.rename(id, to: body.name, by: identity, logger: context.logger)
    }

    @Sendable func delete(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        try await places.delete(try context.resourceID(else: PlaceError.notFound), by: try context.requireIdentity(), logger: context.logger)
        return .noContent
    }
}
