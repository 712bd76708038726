import Hummingbird

/// Counts key fetches and plays an outage. Both sit in front of routing because an unavailable
/// provider answers 503 on every endpoint, and a key fetch during an outage still counts (a test
/// of the service's retry behaviour wants to see it).
struct RequestGateMiddleware<Context: RequestContext>: RouterMiddleware {
    let core: ProviderCore

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let isKeysFetch = request.uri.path == "/jwks"
        let available = core.state.withLock { state in
            if isKeysFetch { state.keysFetchCount += 1 }
            return state.available
        }
        guard available else { return Response(status: .serviceUnavailable) }
        return try await next(request, context)
    }
}
