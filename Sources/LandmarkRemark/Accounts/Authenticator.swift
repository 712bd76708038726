import Credentials
import Hummingbird
import Postgres

/// Resolves `Authorization: Bearer lr_at_…` into an `Identity`, or answers `401`.
///
/// The token is looked up by its SHA-256 through a SECURITY DEFINER function,
/// the one query that runs before the tenant is known. `X-Tenant`, when sent,
/// must name the token's tenant.
///
/// On the event stream only, a request without `Authorization` may carry a stream ticket
/// instead (`?ticket=lr_st_…`, `StreamTicketStore`): browsers' `EventSource` sends no headers.
struct Authenticator: RouterMiddleware {
    typealias Context = AppRequestContext
    let pool: PostgresPool
    var acceptsStreamTickets = false

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.identity = try await authenticate(request, context: context)
        return try await next(request, context)
    }

    func authenticate(_ request: Request, context: Context) async throws -> Identity {
        let found: Identity?
        if request.headers[.authorization] == nil, acceptsStreamTickets, let ticket = Self.streamTicket(request) {
            found = try await StreamTicketStore.redeem(ticket, on: pool, logger: context.logger)
        } else {
            guard let hash = Self.accessTokenHash(request) else { throw AppError.unauthenticated }
            found = try await SessionStore.identity(accessTokenHash: hash, on: pool, logger: context.logger)
        }
        guard let identity = found else { throw AppError.unauthenticated }
        if let named = request.headers[.xTenant], named != identity.tenantSlug { throw TenantError.mismatch }
        context.tenantTag.set(identity.tenantSlug)
        return identity
    }

    /// The `ticket` query parameter, when there is exactly one.
    private static func streamTicket(_ request: Request) -> String? {
        let values = request.uri.queryParameters.getAll("ticket")
        return values.count == 1 ? String(values[0]) : nil
    }

    /// The SHA-256 of the request's `Authorization: Bearer lr_at_…` token, as stored; nil
    /// without a plausible one.
    private static func accessTokenHash(_ request: Request) -> [UInt8]? {
        guard let header = request.headers[.authorization] else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer", parts[1].hasPrefix("lr_at_"), parts[1].utf8.count <= 128 else {
            return nil
        }
        return Tokens.sha256(String(parts[1]))
    }
}
