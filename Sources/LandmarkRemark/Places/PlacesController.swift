import Hummingbird
import Postgres

/// `/v1/places`: default places from the operator, custom ones from users.
struct PlacesController {
    let pool: PostgresPool
    let store: PlaceStore
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
        let place = try await pool.withTenantTransaction(identity.tenantID, logger: context.logger) { connection in
            try await store.create(
                tenantID: identity.tenantID, creatorID: identity.userID, name: draft.name, lat: draft.lat, lng: draft.lng, on: connection)
        }
        return EditedResponse(status: .created, headers: [.location: "/v1/places/\(place.id)"], response: place)
    }

    @Sendable func list(_ request: Request, context: AppRequestContext) async throws -> Page<Place> {
        let identity = try context.requireIdentity()
        var parameters = try QueryParameters(query: request.uri.query)
        let list = try PlaceList(&parameters)
        return try await pool.withTenantReads(identity.tenantID, logger: context.logger) {
            try await store.page(list, tenantID: identity.tenantID, viewerID: identity.userID, on: $0)
        }
    }

    @Sendable func show(_ request: Request, context: AppRequestContext) async throws -> Place {
        let identity = try context.requireIdentity()
        let id = try Self.id(context)
        let place = try await pool.withTenantReads(identity.tenantID, logger: context.logger) {
            try await store.find(tenantID: identity.tenantID, id: id, viewer: identity.userID, on: $0)
        }
        guard let place else { throw PlaceError.notFound }
        return place
    }

    /// Renames a custom place; only its creator may, and default places not at all.
    @Sendable func rename(_ request: Request, context: AppRequestContext) async throws -> Place {
        var request = request
        let identity = try context.requireIdentity()
        let id = try Self.id(context)
        let body = try await request.decode(PlaceRename.self, context: context, limit: bodyLimit)
        let place = try await pool.withTenantTransaction(identity.tenantID, logger: context.logger) { connection in
            try await store.requireEditable(tenantID: identity.tenantID, id: id, userID: identity.userID, on: connection)
            try await store.rename(tenantID: identity.tenantID, id: id, name: body.name, on: connection)
            return try await store.find(tenantID: identity.tenantID, id: id, viewer: identity.userID, on: connection)
        }
        guard let place else { throw PlaceError.notFound }
        return place
    }

    @Sendable func delete(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        let identity = try context.requireIdentity()
        let id = try Self.id(context)
        try await pool.withTenantTransaction(identity.tenantID, logger: context.logger) { connection in
            try await store.requireEditable(tenantID: identity.tenantID, id: id, userID: identity.userID, on: connection)
            try await store.delete(tenantID: identity.tenantID, id: id, on: connection)
        }
        return .noContent
    }

    /// A malformed id names no place: `404`, like an id of another tenant.
    private static func id(_ context: AppRequestContext) throws -> Int64 {
        guard let id = context.parameters.get("id").flatMap(ResourceID.parse) else { throw PlaceError.notFound }
        return id
    }
}
