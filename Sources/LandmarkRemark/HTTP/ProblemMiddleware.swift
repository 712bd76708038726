import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Metrics
import NIOHTTP1
import Postgres
import Synchronization

/// Turns every error into problem details: the features' own errors through
/// `Problems+Domain.swift`, Hummingbird's and the database's here. No error leaves the
/// service except through here.
struct ProblemMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            return render(error, request: request, context: context)
        }
    }

    /// Maps any error to problem details; unexpected ones are logged once, in full, and answered without internals.
    func render(_ error: Error, request: Request, context: Context) -> Response {
        // The edge's own problems, and the features' errors in the words of `Problems+Domain.swift`.
        if let problem = error as? AppError ?? AppError(domain: error) {
            return Self.response(for: problem, requestID: context.requestID)
        }
        let problem: AppError
        switch error {
        case let error as HTTPError:
            problem = Self.problem(for: error)
        case let error as HTTPResponseError:
            // Other library errors that carry a status (a body over the limit, say): keep the status, not the text.
            problem = Self.problem(for: HTTPError(error.status))
        case let error as HTTPParserError:
            // The body broke HTTP/1.1 framing (a bad chunk size, say) while a handler read it:
            // the client's fault. The connection cannot carry another request, so it ends here.
            var response = Self.response(for: .malformed("the request is not valid HTTP/1.1 (\(error))"), requestID: context.requestID)
            response.headers[.connection] = "close"
            return response
        case let error as PostgresError where error.isCancellation:
            // The statement timeout, or a cancelled request (deadline, client gone).
            Self.countDatabaseError(error)
            context.logger.warning("statement cancelled", metadata: ["error": .string(String(reflecting: error))])
            problem = .deadlineExceeded
        case let error as PostgresError where error.isUnavailable:
            Self.countDatabaseError(error)
            context.logger.warning("database unavailable", metadata: ["error": .string(String(reflecting: error))])
            problem = .unavailable()
        case let error as PostgresError:
            Self.countDatabaseError(error)
            context.logger.error("unexpected database error", metadata: ["error": .string(String(reflecting: error))])
            problem = .internalError
        case is CancellationError:
            problem = .unavailable()
        default:
            context.logger.error("unexpected error", metadata: ["error": .string(String(reflecting: error))])
            problem = .internalError
        }
        return Self.response(for: problem, requestID: context.requestID)
    }

    /// Database failures that reached the client, by SQLSTATE class (`08` connection, `23` constraint, …).
    static func countDatabaseError(_ error: PostgresError) {
        let sqlClass = error.sqlState.map { String($0.prefix(2)) } ?? "\(error.kind)"
        Counter(label: "lr_db_errors_total", dimensions: [("sqlstate_class", sqlClass)]).increment()
    }

    static func response(for problem: AppError, requestID: String) -> Response {
        var headers: HTTPFields = [.contentType: "application/problem+json"]
        if let retryAfter = problem.retryAfter { headers[.retryAfter] = String(retryAfter) }
        // RFC 9110: a 401 names the scheme that would succeed.
        if problem.status == .unauthorized { headers[.wwwAuthenticate] = "Bearer realm=\"landmark-remark\"" }
        return Response(
            status: problem.status, headers: headers,
            body: .init(byteBuffer: Problem(problem, requestID: requestID).jsonBuffer))
    }

    /// Hummingbird's own errors (no route, body too large, bad method) in our vocabulary.
    static func problem(for error: HTTPError) -> AppError {
        switch error.status {
        case .notFound: return .notFound("route")
        case .contentTooLarge: return .payloadTooLarge
        case .methodNotAllowed:
            return AppError(.methodNotAllowed, code: "method_not_allowed", title: "Method not allowed", detail: "this path does not accept that method")
        case .unsupportedMediaType: return .unsupportedMediaType
        case .badRequest: return .malformed(error.body ?? "the request is malformed")
        default:
            return AppError(error.status, code: "http_\(error.status.code)", title: error.status.reasonPhrase, detail: error.body ?? error.status.reasonPhrase)
        }
    }
}

extension Problem {
    /// The problem details of `problem`: `errors` only when there are field errors, and a
    /// `type` that is the documentation's address of `code`.
    init(_ problem: AppError, requestID: String) {
        self.init(
            type: "https://landmark-remark.dev/problems/\(problem.code.replacingOccurrences(of: "_", with: "-"))",
            title: problem.title, status: Int(problem.status.code), code: problem.code, detail: problem.detail,
            errors: problem.errors.isEmpty ? nil : problem.errors, requestID: requestID)
    }
}
