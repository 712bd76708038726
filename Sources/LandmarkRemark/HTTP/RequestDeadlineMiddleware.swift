import Hummingbird
import Logging

/// Bounds every request: past `timeout`, or once its client went away (`ClientHangup`),
/// the handler's task is cancelled, which cancels its running statement on the server
/// (the Postgres layer sends a cancel request and drains the connection back to health).
///
/// The handler runs in a child task racing the two, so it can be cancelled without ending
/// the connection's own task. A response returned by the handler is streamed after this
/// middleware returns, so an event stream's life is not bounded here: only the part of its
/// handler that opens it is.
struct RequestDeadlineMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext

    let timeout: Duration

    private enum Outcome: Sendable {
        case answered(Response)
        case failed(any Error)
        case deadline
        case clientGone
        /// A watcher that stopped because the handler finished first.
        case stood
    }

    /// The handler closure, which only lives through this call: the task group ends before
    /// `withoutActuallyEscaping` returns, and the child is the closure's only caller.
    private struct Handler: @unchecked Sendable {
        let call: (Request, Context) async throws -> Response
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let hangup = ClientHangup.of(context.channel)
        let timeout = self.timeout
        return try await withoutActuallyEscaping(next) { next in
            let handler = Handler(call: next)
            let result = await withTaskGroup(of: Outcome.self) { group -> Result<Response, any Error> in
                group.addTask {
                    do { return .answered(try await handler.call(request, context)) } catch { return .failed(error) }
                }
                group.addTask {
                    do { try await Task.sleep(for: timeout) } catch { return .stood }
                    return .deadline
                }
                if let hangup {
                    group.addTask { await hangup.wait() ? .clientGone : .stood }
                }
                var interruption: Outcome?
                while let outcome = await group.next() {
                    switch outcome {
                    case .answered(let response):
                        group.cancelAll()
                        return .success(response)
                    case .failed(let error):
                        group.cancelAll()
                        return .failure(interruption.map { Self.error(for: $0, route: context.endpointPath, logger: context.logger) } ?? error)
                    case .deadline, .clientGone:
                        // Cancel the handler and wait for it: it drains its statement first.
                        if interruption == nil { interruption = outcome }
                        group.cancelAll()
                    case .stood:
                        continue
                    }
                }
                preconditionFailure("the handler's child always reports")
            }
            return try result.get()
        }
    }

    /// What a cancelled handler answers; logged as a warning with the request id.
    private static func error(for interruption: Outcome, route: String?, logger: Logger) -> any Error {
        if case .clientGone = interruption {
            logger.warning("client went away; request cancelled", metadata: ["route": .string(route ?? "unmatched")])
            return CancellationError()
        }
        logger.warning("request passed its deadline; cancelled", metadata: ["route": .string(route ?? "unmatched")])
        return AppError.deadlineExceeded
    }
}
