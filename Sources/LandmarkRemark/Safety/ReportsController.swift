import Hummingbird

/// `POST /v1/reports` and `GET /v1/me/reports`.
struct ReportsController {
    let reports: ReportService
    let bodyLimit: Int

    var endpoints: RouteCollection<AppRequestContext> {
        RouteCollection(context: AppRequestContext.self)
            .post(use: create)
    }

    var myEndpoints: RouteCollection<AppRequestContext> {
        RouteCollection(context: AppRequestContext.self)
            .get(use: list)
    }

    @Sendable func create(_ request: Request, context: AppRequestContext) async throws -> Response {
        var request = request
        let identity = try context.requireIdentity()
        let draft = try await request.decode(ReportDraft.self, context: context, limit: bodyLimit)
        let filed = try await reports.report(draft, by: identity, logger: context.logger)
        var response = try filed.report.response(from: request, context: context)
        response.status = filed.created ? .created : .ok
        return response
    }

    @Sendable func list(_ request: Request, context: AppRequestContext) async throws -> ReportPage {
        var parameters = try QueryParameters(query: request.uri.query)
        let page = try PageRequest(&parameters, nearest: false, fingerprint: Self.listFingerprint)
        try parameters.finish()
        return try await reports.page(page, for: try context.requireIdentity(), logger: context.logger)
    }

    /// A cursor of this list fits no other.
    static let listFingerprint = Array("v1|reports".utf8)
}
