import HTTPTypes
import Hummingbird

/// Cross-origin calls from web pages, allowed per tenant (`allowed_origins`, none by default).
///
/// An actual call is answered as usual; only when its tenant lists the page's origin does
/// the answer carry `Access-Control-Allow-Origin`, so the browser lets the page read it.
/// The tenant is the one the request turned out to act in (the access token's, a stream
/// ticket's, or `X-Tenant`), which inner layers record in the context's `tenantTag`.
///
/// A preflight names no tenant (browsers send `X-Tenant` only with the call itself), so it
/// passes when any tenant lists the origin. That lets the call be sent, not read: its answer
/// still needs its own tenant's consent. And no call is authenticated by anything a browser
/// adds by itself (no cookies), so an allowed page cannot act with a user's rights it was
/// not given. Credentials mode is therefore never allowed.
struct CORSMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let origins: TenantOrigins

    static let allowedMethods = "GET, POST, PATCH, DELETE"
    static let allowedHeaders = "Authorization, Content-Type, X-Tenant, If-Match, If-None-Match, Idempotency-Key, Last-Event-ID, X-Request-Id"
    static let exposedHeaders = "ETag, Location, Retry-After, X-Request-Id, Idempotent-Replayed"
    /// Browsers cap this anyway (Chromium at two hours); ten minutes keeps a changed list prompt.
    static let preflightMaxAge = "600"

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.uri.path.hasPrefix("/v1/") else { return try await next(request, context) }
        guard let origin = request.headers[.origin] else {
            // The answer depends on Origin whenever there is one, so a cache must key on it.
            var response = try await next(request, context)
            response.headers.append(HTTPField(name: .vary, value: "Origin"))
            return response
        }
        if request.method == .options, request.headers[.accessControlRequestMethod] != nil {
            do {
                return try await preflight(origin: origin, context: context)
            } catch {
                return ProblemMiddleware().render(error, request: request, context: context)
            }
        }
        var response = try await next(request, context)
        response.headers.append(HTTPField(name: .vary, value: "Origin"))
        // A lookup that fails (the database away) leaves the answer unreadable to the page,
        // which is what the page would see of that outage anyway.
        if Self.isWellFormed(origin), let tenant = context.tenantTag.value ?? request.headers[.xTenant],
            (try? await origins.allows(origin, tenant: tenant, logger: context.logger)) == true
        {
            response.headers[.accessControlAllowOrigin] = origin
            response.headers[.accessControlExposeHeaders] = Self.exposedHeaders
        }
        return response
    }

    private func preflight(origin: String, context: Context) async throws -> Response {
        guard Self.isWellFormed(origin), try await origins.anyTenantAllows(origin, logger: context.logger) else {
            // Rendered here: this sits outside `ProblemMiddleware`, to see the problems it renders.
            var refusal = ProblemMiddleware.response(for: Self.originNotAllowed(origin), requestID: context.requestID)
            refusal.headers.append(HTTPField(name: .vary, value: "Origin"))
            return refusal
        }
        return Response(status: .noContent, headers: [
            .accessControlAllowOrigin: origin,
            .accessControlAllowMethods: Self.allowedMethods,
            .accessControlAllowHeaders: Self.allowedHeaders,
            .accessControlMaxAge: Self.preflightMaxAge,
            .vary: "Origin",
        ])
    }

    static func originNotAllowed(_ origin: String) -> AppError {
        AppError(
            .forbidden, code: "origin_not_allowed", title: "Origin not allowed",
            detail: "no tenant lets pages from \(origin.prefix(200)) call this API (an operator sets allowed_origins)")
    }

    /// What a browser sends: `scheme://host[:port]`, lowercase, short. Anything else (`null`
    /// from sandboxed frames and files included) is never in a tenant's list.
    static func isWellFormed(_ origin: String) -> Bool {
        origin.utf8.count <= 255 && (origin.hasPrefix("https://") || origin.hasPrefix("http://"))
            && origin.utf8.allSatisfy { byte in
                (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                    || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ":") || byte == UInt8(ascii: "/")
            }
    }
}
