import Credentials
import Hummingbird
import Postgres

/// Resolves `Authorization: Bearer lr_at_…` into an `Identity`, or answers `401`.
///
/// The token is looked up by its SHA-256 through a SECURITY DEFINER function,
/// the one query that runs before the tenant is known. `X-Tenant`, when sent,
/// must name the token's tenant.
struct Authenticator: RouterMiddleware {
    typealias Context = AppRequestContext
    let pool: PostgresPool

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.identity = try await authenticate(request, context: context)
        return try await next(request, context)
    }

    func authenticate(_ request: Request, context: Context) async throws -> Identity {
        guard let hash = Self.accessTokenHash(request) else { throw AppError.unauthenticated }
        let rows = try await pool.query("""
            SELECT tenant_id, tenant_slug, user_id, username, session_id
            FROM authenticate_access_token(\(PostgresBytes(hash)))
            """)
        guard let row = rows.first else { throw AppError.unauthenticated }
        let (tenantID, slug, userID, username, sessionID) = try row.decode((Int64, String, Int64, String, Int64).self)
        if let named = request.headers[.xTenant], named != slug { throw TenantError.mismatch }
        context.tenantTag.set(slug)
        return Identity(
            tenantID: tenantID, tenantSlug: slug, userID: userID, username: username, sessionID: sessionID, accessTokenHash: hash)
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
