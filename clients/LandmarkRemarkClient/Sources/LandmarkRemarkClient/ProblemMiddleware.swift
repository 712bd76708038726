import Foundation
import HTTPTypes
import OpenAPIRuntime

/// Turns every `application/problem+json` answer into a thrown `APIProblem`, whatever the
/// operation: callers then handle one error type, and the generated code only its successes.
struct ProblemMiddleware: ClientMiddleware {
    /// Problem bodies are small; anything larger is not one of ours.
    static let maximumBytes = 64 * 1024

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let (response, responseBody) = try await next(request, body, baseURL)
        guard response.status.code >= 400 else { return (response, responseBody) }
        var bytes = Data()
        if let responseBody {
            // Larger than any problem of ours: not one (a proxy's page), and no reason to retry.
            guard let collected = try? await Data(collecting: responseBody, upTo: Self.maximumBytes) else {
                throw LandmarkRemarkError.unexpectedResponse(status: response.status.code)
            }
            bytes = collected
        }
        if let problem = Self.problem(from: bytes, response: response) { throw problem }
        throw LandmarkRemarkError.unexpectedResponse(status: response.status.code)
    }

    static func problem(from bytes: Data, response: HTTPResponse) -> APIProblem? {
        struct Wire: Decodable {
            struct FieldError: Decodable {
                let field: String
                let message: String
            }
            let status: Int
            let code: String
            let title: String
            let detail: String
            let errors: [FieldError]?
            let request_id: String
        }
        guard let wire = try? JSONDecoder().decode(Wire.self, from: bytes) else { return nil }
        return APIProblem(
            status: wire.status, code: ProblemCode(rawValue: wire.code), title: wire.title, detail: wire.detail,
            fieldErrors: (wire.errors ?? []).map { .init(field: $0.field, message: $0.message) },
            retryAfter: response.headerFields[.retryAfter].flatMap { Int($0) },
            requestID: wire.request_id)
    }
}

/// Names the tenant on every request (calls without a token need it; with a token the
/// service checks that both agree), and sends entity tags as they are: the generated code
/// percent-encodes header parameters as URI parts, which turns an ETag's quotes into `%22`
/// and so would make every `If-Match` fail.
struct TenantMiddleware: ClientMiddleware {
    let tenant: String

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        request.headerFields[HTTPField.Name("X-Tenant")!] = tenant
        for name in [HTTPField.Name.ifMatch, .ifNoneMatch] {
            if let value = request.headerFields[name], let decoded = value.removingPercentEncoding {
                request.headerFields[name] = decoded
            }
        }
        return try await next(request, body, baseURL)
    }
}

/// Sends the session's access token, and when the service answers `401 unauthenticated`
/// (the token expired or was revoked meanwhile) refreshes once, through the session (one
/// refresh however many calls ask at once), and sends the request once more.
struct AuthMiddleware: ClientMiddleware {
    let session: Session

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let token = try await session.accessToken()
        do {
            return try await next(Self.authorized(request, token), body, baseURL)
        } catch let error as ClientError where (error.underlyingError as? APIProblem)?.code == .unauthenticated
            && body?.iterationBehavior != .single
        {
            let fresh = try await session.refresh(replacing: token)
            return try await next(Self.authorized(request, fresh), body, baseURL)
        }
    }

    private static func authorized(_ request: HTTPRequest, _ token: String) -> HTTPRequest {
        var request = request
        request.headerFields[.authorization] = "Bearer \(token)"
        return request
    }
}

/// Sends one given access token: sign-out uses the token it had, after the session let go of it.
struct BearerMiddleware: ClientMiddleware {
    let token: String

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        request.headerFields[.authorization] = "Bearer \(token)"
        return try await next(request, body, baseURL)
    }
}
