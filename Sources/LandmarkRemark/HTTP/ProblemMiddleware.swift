import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Metrics
import NIOHTTP1
import Postgres
import Synchronization

/// The outermost middleware: gives every request its id, resolves the client
/// address, turns every error into problem details, and writes the one log
/// line per request. Nothing leaves the service except through here.
struct ProblemMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext

    let trustedProxies: TrustedProxies

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        var context = context
        context.requestID = Self.requestID(from: request.headers[.requestID])
        context.logger[metadataKey: "request_id"] = .string(context.requestID)
        let peer = context.remoteAddress?.ipAddress ?? "unknown"
        context.clientAddress = trustedProxies.clientAddress(peer: peer, forwardedFor: request.headers[.xForwardedFor])
        let tenant = TenantTag()
        context.tenantTag = tenant

        var response: Response
        do {
            response = try await next(request, context)
        } catch {
            response = render(error, request: request, context: context)
        }
        response.headers[.requestID] = context.requestID

        let elapsed = ContinuousClock.now - started
        let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        context.logger.info("request", metadata: [
            "method": .string(request.method.rawValue),
            "route": .string(context.endpointPath ?? "unmatched"),
            "status": .stringConvertible(response.status.code),
            "tenant": .string(tenant.value ?? "-"),
            "client": .string(context.clientAddress),
            "duration_ms": .string(String(format: "%.2f", milliseconds)),
        ])
        return response
    }

    /// Maps any error to problem details; unexpected ones are logged once, in full, and answered without internals.
    func render(_ error: Error, request: Request, context: Context) -> Response {
        let problem: AppError
        switch error {
        case let error as AppError:
            problem = error
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
        let body = ProblemBody(
            type: "https://landmark-remark.dev/problems/\(problem.code.replacingOccurrences(of: "_", with: "-"))",
            title: problem.title, status: Int(problem.status.code), code: problem.code, detail: problem.detail,
            errors: problem.errors.isEmpty ? nil : problem.errors, requestId: requestID)
        var headers: HTTPFields = [:]
        if let retryAfter = problem.retryAfter { headers[.retryAfter] = String(retryAfter) }
        // RFC 9110: a 401 names the scheme that would succeed.
        if problem.status == .unauthorized { headers[.wwwAuthenticate] = "Bearer realm=\"landmark-remark\"" }
        var response = (try? Response.json(body, status: problem.status, headers: headers)) ?? Response(status: problem.status)
        response.headers[.contentType] = "application/problem+json"
        return response
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

    /// Keeps a client's id when it is a sane token, so it can be traced end to end; else makes one.
    static func requestID(from header: String?) -> String {
        if let header, !header.isEmpty, header.utf8.count <= 128,
            header.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") })
        {
            return header
        }
        var generator = SystemRandomNumberGenerator()
        return hex16(generator.next()) + hex16(generator.next())
    }

    private static func hex16(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}

struct ProblemBody: Encodable {
    let type: String
    let title: String
    let status: Int
    let code: String
    let detail: String
    let errors: [AppError.FieldError]?
    let requestId: String
}

/// Lets inner layers tell the log line which tenant the request belonged to.
final class TenantTag: Sendable {
    private let slug = Mutex<String?>(nil)
    var value: String? { slug.withLock { $0 } }
    func set(_ value: String) { slug.withLock { $0 = value } }
}

extension HTTPField.Name {
    static let requestID = Self("X-Request-Id")!
    static let xForwardedFor = Self("X-Forwarded-For")!
    static let xTenant = Self("X-Tenant")!
    static let idempotencyKey = Self("Idempotency-Key")!
}
