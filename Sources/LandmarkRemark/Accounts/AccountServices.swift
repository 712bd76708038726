import Postgres

/// What the account controllers work with: the tenant's users, their sessions, the
/// password checks (`LoginService`) and hashing they share, and sign-in with ID tokens.
struct AccountServices: Sendable {
    let pool: PostgresPool
    let tenants: TenantStore
    let users: UserStore
    let sessions: SessionStore
    let login: LoginService
    let hashing: PasswordHashing
    let identities: IdentityService
}
