import Hummingbird

/// `GET /v1/me/blocks`, `PUT` and `DELETE /v1/me/blocks/{username}`.
struct BlocksController {
    let blocks: BlockService

    var endpoints: RouteCollection<AppRequestContext> {
        RouteCollection(context: AppRequestContext.self)
            .get(use: list)
            .put(":username", use: block)
            .delete(":username", use: unblock)
    }

    @Sendable func list(_ request: Request, context: AppRequestContext) async throws -> BlockPage {
        var parameters = try QueryParameters(query: request.uri.query)
        let page = try PageRequest(&parameters, nearest: false, fingerprint: Self.listFingerprint)
        try parameters.finish()
        return try await blocks.page(page, for: try context.requireIdentity(), logger: context.logger)
    }

    @Sendable func block(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        try await blocks.block(try Self.username(context), by: try context.requireIdentity(), logger: context.logger)
        return .noContent
    }

    @Sendable func unblock(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        try await blocks.unblock(try Self.username(context), by: try context.requireIdentity(), logger: context.logger)
        return .noContent
    }

    /// A cursor of this list fits no other.
    static let listFingerprint = Array("v1|blocks".utf8)

    private static func username(_ context: AppRequestContext) throws -> String {
        let username = try context.parameters.require("username")
        guard Username.problem(username) == nil else { throw SafetyError.userNotFound }
        return username
    }
}
