import Hummingbird
import Postgres

/// Resolves `Authorization: Bearer lr_at_…` into an `Identity`, or answers `401`.
///
/// The token names its tenant and is looked up there by its SHA-256 (`AccessTokenStore`); a
/// legacy one, without a tenant part, through the SECURITY DEFINER function that finds it
/// by hash alone. `X-Tenant`, when sent, must name the token's tenant.
///
/// On the event stream only, a request without `Authorization` may carry a stream ticket
/// instead (`?ticket=lr_st_…`, `StreamTicketService`): browsers' `EventSource` sends no headers.
struct Authenticator: RouterMiddleware {
    typealias Context = AppRequestContext
    let pool: PostgresPool
    let tokens: AccessTokenStore
    /// On the event stream only: the tickets a request may carry instead of a token.
    var streamTickets: StreamTicketService? = nil

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.identity = try await authenticate(request, context: context)
        return try await next(request, context)
    }

    func authenticate(_ request: Request, context: Context) async throws -> Identity {
        let found: Identity?
        if request.headers[.authorization] == nil, let streamTickets, let ticket = Self.streamTicket(request) {
            found = try await streamTickets.redeem(ticket, logger: context.logger)
        } else {
            guard let token = Self.accessToken(request) else { throw AppError.unauthenticated }
            found = try await tokens.identity(accessToken: token, on: pool, logger: context.logger)
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

    /// The request's `Authorization: Bearer lr_at_…` token; nil without a plausible one.
    private static func accessToken(_ request: Request) -> String? {
        guard let header = request.headers[.authorization] else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer", parts[1].hasPrefix(SessionStore.accessTokenPrefix),
            parts[1].utf8.count <= 128
        else {
            return nil
        }
        return String(parts[1])
    }
}
