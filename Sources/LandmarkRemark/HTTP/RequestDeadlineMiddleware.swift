import Hummingbird
import Logging

/// Bounds every request: past `timeout` (`RequestDeadlines`), or once its client went away
/// (`ClientHangup`), the handler's task is cancelled, which cancels its running statement on
/// the server (the Postgres layer sends a cancel request and drains the connection back to
/// health).
///
/// The handler runs in a child task, so it can be cancelled without ending the connection's
/// own task; the child starts at once on this thread (no hop to another) and is the only one.
/// A response returned by the handler is streamed after this middleware returns, so an event
/// stream's life is not bounded here: only the part of its handler that opens it is.
struct RequestDeadlineMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext

    let deadlines: RequestDeadlines

    init(timeout: Duration) {
        deadlines = RequestDeadlines(timeout: timeout)
    }

    /// The handler closure, which only lives through this call: the task group ends before
    /// `withoutActuallyEscaping` returns, and the child is the closure's only caller.
    private struct Handler: @unchecked Sendable {
        let call: (Request, Context) async throws -> Response
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let hangup = ClientHangup.of(context.channel)
        let deadlines = self.deadlines
        return try await withoutActuallyEscaping(next) { next in
            let handler = Handler(call: next)
            return try await withThrowingTaskGroup(of: Response.self) { group in
                group.addImmediateTask {
                    try await withUnsafeCurrentTask { task in
                        guard let task else { return try await handler.call(request, context) }
                        let watched = InterruptibleRequest(task)
                        deadlines.watch(watched)
                        hangup?.watch(watched)
                        defer { hangup?.unwatch() }
                        do {
                            let response = try await handler.call(request, context)
                            _ = watched.finish()
                            return response
                        } catch {
                            // Interrupted: the handler was cancelled, and has drained its statement.
                            guard let interruption = watched.finish() else { throw error }
                            throw Self.error(for: interruption, route: context.endpointPath, logger: context.logger)
                        }
                    }
                }
                return try await group.next()!
            }
        }
    }

    /// What a cancelled handler answers; logged as a warning with the request id.
    private static func error(for interruption: InterruptibleRequest.Interruption, route: String?, logger: Logger) -> any Error {
        if case .clientGone = interruption {
            logger.warning("client went away; request cancelled", metadata: ["route": .string(route ?? "unmatched")])
            return CancellationError()
        }
        logger.warning("request passed its deadline; cancelled", metadata: ["route": .string(route ?? "unmatched")])
        return AppError.deadlineExceeded
    }
}
