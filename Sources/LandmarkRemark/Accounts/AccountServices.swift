import Postgres

/// What both account controllers work with: the tenant's users, their sessions, and the
/// password checks (`LoginService`) and hashing they share.
struct AccountServices: Sendable {
    let pool: PostgresPool
    let tenants: TenantStore
    let users: UserStore
    let sessions: SessionStore
    let login: LoginService
    let hashing: PasswordHashing
}
