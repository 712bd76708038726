import Hummingbird

/// `/v1/places`: default places from the operator, custom ones from users.
struct PlacesController {
    let services: AppServices
    let store = PlaceStore()

    var endpoints: RouteCollection<AppRequestContext> {
        RouteCollection(context: AppRequestContext.self)
            .get(use: list)
            .post(use: create)
            .get(":id", use: show)
            .patch(":id", use: rename)
            .delete(":id", use: delete)
    }

    @Sendable func create(_ request: Request, context: AppRequestContext) async throws -> Response {
        var request = request
        let identity = try context.requireIdentity()
        var body = try await request.jsonObject(context: context, limit: services.configuration.bodyLimitBytes)
        let (name, lat, lng) = (body.string("name").map { ($0, PlaceRules.name($0)) }, body.number("lat"), body.number("lng"))
        if let name, name.1 == nil { body.fail("name", "must be 1 to 100 characters, without control characters") }
        if let lat, !(-90...90).contains(lat) { body.fail("lat", "must be from -90 to 90") }
        if let lng, !(-180...180).contains(lng) { body.fail("lng", "must be from -180 to 180") }
        try body.finish()
        guard let validName = name?.1, let lat, let lng else { throw AppError.internalError }
        let place = try await services.pool.withTenant(identity.tenantID) { connection in
            try await store.create(tenantID: identity.tenantID, creatorID: identity.userID, name: validName, lat: lat, lng: lng, on: connection)
        }
        return .json(place, status: .created, headers: [.location: "/v1/places/\(place.id)"])
    }

    @Sendable func list(_ request: Request, context: AppRequestContext) async throws -> Response {
        let identity = try context.requireIdentity()
        var parameters = try QueryParameters(query: request.uri.query)
        let list = try PlaceList(&parameters)
        let page = try await services.pool.withReads(identity.tenantID) {
            try await list.page(tenantID: identity.tenantID, viewerID: identity.userID, on: $0)
        }
        return .json(page)
    }

    @Sendable func show(_ request: Request, context: AppRequestContext) async throws -> Response {
        let identity = try context.requireIdentity()
        let id = try Self.id(context)
        let place = try await services.pool.withReads(identity.tenantID) {
            try await store.find(tenantID: identity.tenantID, id: id, viewer: identity.userID, on: $0)
        }
        guard let place else { throw AppError.notFound("place") }
        return .json(place)
    }

    /// Renames a custom place; only its creator may, and default places not at all.
    @Sendable func rename(_ request: Request, context: AppRequestContext) async throws -> Response {
        var request = request
        let identity = try context.requireIdentity()
        let id = try Self.id(context)
        var body = try await request.jsonObject(context: context, limit: services.configuration.bodyLimitBytes)
        let raw = body.string("name")
        let name = raw.flatMap(PlaceRules.name)
        if raw != nil, name == nil { body.fail("name", "must be 1 to 100 characters, without control characters") }
        try body.finish()
        guard let name else { throw AppError.internalError }
        let place = try await services.pool.withTenant(identity.tenantID) { connection in
            try await store.requireEditable(tenantID: identity.tenantID, id: id, userID: identity.userID, on: connection)
            try await store.rename(tenantID: identity.tenantID, id: id, name: name, on: connection)
            return try await store.find(tenantID: identity.tenantID, id: id, viewer: identity.userID, on: connection)
        }
        guard let place else { throw AppError.notFound("place") }
        return .json(place)
    }

    @Sendable func delete(_ request: Request, context: AppRequestContext) async throws -> Response {
        let identity = try context.requireIdentity()
        let id = try Self.id(context)
        try await services.pool.withTenant(identity.tenantID) { connection in
            try await store.requireEditable(tenantID: identity.tenantID, id: id, userID: identity.userID, on: connection)
            try await store.delete(tenantID: identity.tenantID, id: id, on: connection)
        }
        return .noContent()
    }

    /// A malformed id names no place: `404`, like an id of another tenant.
    private static func id(_ context: AppRequestContext) throws -> Int64 {
        guard let id = context.parameters.get("id").flatMap(NoteRules.id) else { throw AppError.notFound("place") }
        return id
    }
}
