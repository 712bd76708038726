/// Why a request names no tenant it can act in (`Problems+Domain.swift` says it in HTTP).
enum TenantError: Error, Equatable {
    /// An unauthenticated call without `X-Tenant`.
    case headerMissing
    /// `X-Tenant` names no active tenant.
    case notFound
    /// `X-Tenant` names a tenant other than the access token's.
    case mismatch
    /// The tenant requires its current terms to be accepted before writing, and they were not.
    case termsNotAccepted
    /// `POST /v1/me/terms` named another version than the current one (or the tenant has none).
    case notTheCurrentTerms(current: String?)
}
