import Hummingbird
import Logging
import Postgres

/// `GET /v1/tenant`: a tenant's public facts, without a sign-in.
struct TenantsController {
    let pool: PostgresPool
    let tenants: TenantStore

    func register(on router: some RouterMethods<AppRequestContext>) {
        router.get("tenant", use: info)
    }

    @Sendable func info(_ request: Request, context: AppRequestContext) async throws -> TenantInfo {
        let tenant = try await tenants.active(named: request.headers[.xTenant], on: pool, logger: context.logger)
        return try await tenants.info(of: tenant, on: pool, logger: context.logger)
    }
}
