import Credentials
import Hummingbird
import Logging
import Postgres

/// Resolves `Authorization: Bearer lr_at_…` into an `Identity`, or answers `401`.
///
/// A signed token one of the keys verifies is trusted without a round trip while
/// `AccessTokenCache` knows no revocation of its session newer than it; an opaque one looked
/// up lately is known the same way. Any other token is looked up: in the tenant it names, by
/// its SHA-256 (`AccessTokenStore`), or, a legacy one without a tenant part, through the
/// SECURITY DEFINER function that finds it by hash alone. So a token a replica cannot verify
/// (an unknown key, a revocation to check) costs a lookup, never a refusal the database
/// would not make. `X-Tenant`, when sent, must name the token's tenant.
///
/// On the event stream only, a request without `Authorization` may carry a stream ticket
/// instead (`?ticket=lr_st_…`, `StreamTicketService`): browsers' `EventSource` sends no headers.
struct Authenticator: RouterMiddleware {
    typealias Context = AppRequestContext
    let pool: PostgresPool
    let tokens: AccessTokenStore
    let signer: AccessTokenSigner
    /// The tokens this replica looked up lately.
    let cache: AccessTokenCache
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
            found = try await identity(accessToken: token, logger: context.logger)
        }
        guard let identity = found else { throw AppError.unauthenticated }
        if let named = request.headers[.xTenant], named != identity.tenantSlug { throw TenantError.mismatch }
        context.tenantTag.set(identity.tenantSlug)
        return identity
    }

    /// The token's holder: kept by this replica, or looked up (and then kept).
    private func identity(accessToken token: String, logger: Logger) async throws -> Identity? {
        let hash = Tokens.sha256(token)
        if let claims = signer.verify(token), let trusted = cache.identity(signed: claims, accessTokenHash: hash) { return trusted }
        if let kept = cache.identity(accessTokenHash: hash) { return kept }
        let started = cache.now()
        guard let found = try await tokens.lookUp(accessToken: token, hash: hash, on: pool, logger: logger) else { return nil }
        if let epoch = found.epoch {
            cache.keep(found.identity, epoch: epoch, secondsLeft: found.secondsLeft, checked: started)
        }
        return found.identity
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
            parts[1].utf8.count <= AccessTokenSigner.maximumLength
        else {
            return nil
        }
        return String(parts[1])
    }
}
