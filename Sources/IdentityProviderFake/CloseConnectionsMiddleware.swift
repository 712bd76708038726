import Hummingbird

/// Answers every request with `Connection: close`, so clients open a connection per request and
/// none stays idle. That is what lets ``FakeIdentityProvider/stop()`` end the server promptly
/// without a graceful-shutdown signal: a test provider is stopped and started far more often
/// than it is asked anything twice on one connection.
struct CloseConnectionsMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as HTTPError {
            // Routing failures (404, 405) arrive as errors; answered here so they close too.
            response = Response(status: error.status, headers: error.headers)
        }
        response.headers[.connection] = "close"
        return response
    }
}
