import Hummingbird

/// `GET /v1/moderation/reports`, `POST /v1/moderation/targets/{type}/{id}/decision` and
/// `GET /v1/moderation/log`: for the tenant's moderators.
struct ModerationController {
    let moderation: ModerationService
    let bodyLimit: Int

    var endpoints: RouteCollection<AppRequestContext> {
        RouteCollection(context: AppRequestContext.self)
            .get("reports", use: queue)
            .post("targets/:type/:id/decision", use: decide)
            .get("log", use: log)
    }

    @Sendable func queue(_ request: Request, context: AppRequestContext) async throws -> ModerationQueuePage {
        var parameters = try QueryParameters(query: request.uri.query)
        if let state = parameters.string("state"), state != "open" {
            throw AppError.malformed("state must be open: decided reports are in /v1/moderation/log")
        }
        let page = try PageRequest(&parameters, nearest: false, fingerprint: Array("v1|moderation-queue".utf8))
        try parameters.finish()
        return try await moderation.queue(page, for: try context.requireIdentity(), logger: context.logger)
    }

    @Sendable func decide(_ request: Request, context: AppRequestContext) async throws -> ModerationLogEntry {
        var request = request
        let identity = try context.requireIdentity()
        guard let type = context.parameters.get("type").flatMap(ReportTargetType.init(rawValue:)) else { throw AppError.notFound("target") }
        let id = try context.resourceID(else: AppError.notFound("target"))
        let decision = try await request.decode(ModerationDecision.self, context: context, limit: bodyLimit)
        return try await moderation.decide(decision, on: ReportTarget(type: type, id: id), by: identity, logger: context.logger)
    }

    @Sendable func log(_ request: Request, context: AppRequestContext) async throws -> ModerationLogPage {
        var parameters = try QueryParameters(query: request.uri.query)
        let page = try PageRequest(&parameters, nearest: false, fingerprint: Array("v1|moderation-log".utf8))
        try parameters.finish()
        return try await moderation.log(page, for: try context.requireIdentity(), logger: context.logger)
    }
}
