import Logging
import Postgres

/// One app (or organisation) sharing the deployment.
struct Tenant: Sendable {
    let id: Int64
    let slug: String
    let minPasswordLength: Int
    let guestsEnabled: Bool
}

/// Tenants are global rows (no row-level security): the service reads them to
/// resolve `X-Tenant` before any tenant is set, each with one statement on the pool it is
/// given (no tenant to set, no transaction). Operators create them.
struct TenantStore: Sendable {
    /// Whether the service can mail at all (it has a data key); a tenant also needs a relay.
    var canMail = false

    /// The active tenant an unauthenticated call names with `X-Tenant`.
    func active(named slug: String?, on pool: PostgresPool, logger: Logger) async throws -> Tenant {
        guard let slug, !slug.isEmpty else { throw TenantError.headerMissing }
        // Slugs are short lowercase names; anything else cannot exist, so skip the query.
        guard slug.utf8.count <= 63 else { throw TenantError.notFound }
        let rows = try await pool.query(
            "SELECT id, slug, min_password_length, guests_enabled FROM tenants WHERE slug = \(slug) AND disabled_at IS NULL", logger: logger)
        guard let row = rows.first else { throw TenantError.notFound }
        return try Self.tenant(from: row)
    }

    func find(id: Int64, on pool: PostgresPool, logger: Logger) async throws -> Tenant? {
        let rows = try await pool.query("SELECT id, slug, min_password_length, guests_enabled FROM tenants WHERE id = \(id)", logger: logger)
        return try rows.first.map(Self.tenant(from:))
    }

    /// What a user's write must pass in its tenant: the word list, and whether the user
    /// accepted the terms where the tenant requires them (migrations 0026, 0027).
    struct WritePolicy: Sendable {
        let filter: ContentFilter
        let termsAccepted: Bool
        /// False where the tenant requires a verified email and the user has none (and no
        /// identity whose provider vouches for them).
        var emailVerified = true
        /// The tenant's row version the word list was read at; nil when the user was not found.
        var rulesVersion: String? = nil

        /// The word list, to keep for later creates: they apply it while the row is at this version.
        var rules: WriteRules? { rulesVersion.map { WriteRules(filter: filter, version: $0) } }

        /// Whether `text` (of `field`) is held; throws when the terms, the email rule or the word list refuse it.
        func holds(_ text: String?, field: String) throws -> Bool {
            guard termsAccepted else { throw TenantError.termsNotAccepted }
            guard emailVerified else { throw RecoveryError.emailNotVerified }
            return try filter.holds(text, field: field)
        }
    }

    func writePolicy(tenantID: Int64, userID: Int64, on connection: some PostgresQuerying) async throws -> WritePolicy {
        let rows = try await connection.query("""
            SELECT t.filter_action, t.filter_words, \(Self.termsAccepted(tenant: "t", user: "u")),
                   \(Self.emailVerified(tenant: "t", user: "u", tenantID: tenantID)), \(Self.rulesVersion(tenant: "t"))
            FROM tenants t, users u
            WHERE t.id = \(tenantID) AND u.tenant_id = \(tenantID) AND u.id = \(userID)
            """)
        guard let row = rows.first else { return WritePolicy(filter: .none, termsAccepted: true) }
        return WritePolicy(
            filter: try Self.filter(from: row), termsAccepted: try row.decode(Bool.self, column: 2),
            emailVerified: try row.decode(Bool.self, column: 3), rulesVersion: try row.decode(String.self, column: 4))
    }

    /// Whether the user (`user`, a row of users) accepted the terms where the tenant (`tenant`) requires them.
    static func termsAccepted(tenant: StaticString, user: StaticString) -> PostgresQuery {
        "(NOT \(unsafeSQL: tenant).terms_required OR \(unsafeSQL: user).terms_version IS NOT DISTINCT FROM \(unsafeSQL: tenant).terms_version)"
    }

    /// Whether the user has a verified email (or an identity whose provider vouches for them)
    /// where the tenant requires one. The identities are joined on the user's own tenant
    /// column as well as the constant: Citus pushes a subquery down with the statement only
    /// when it is joined on the distribution column ("complex joins are only supported when …
    /// joined on their distribution columns").
    static func emailVerified(tenant: StaticString, user: StaticString, tenantID: Int64) -> PostgresQuery {
        """
        (NOT \(unsafeSQL: tenant).email_verification_required OR \(unsafeSQL: user).email_verified_at IS NOT NULL
         OR EXISTS (SELECT FROM user_identities i
                    WHERE i.tenant_id = \(unsafeSQL: user).tenant_id AND i.tenant_id = \(tenantID) AND i.user_id = \(unsafeSQL: user).id))
        """
    }

    /// The version of the tenant's row: its `xmin`, which every update of the row (a setting,
    /// the word list, a rename) changes. A statement that finds the row at a version applies
    /// what was read at it (`WriteRules`) as if it had read it itself.
    static func rulesVersion(tenant: StaticString) -> PostgresQuery {
        "\(unsafeSQL: tenant).xmin::text"
    }

    /// A check to send ahead of a write under `rules` kept from an earlier read, in its
    /// pipeline (`PostgresQuerying.checked(by:)`): it raises `rulesChanged` unless the tenant's
    /// row is still at the rules' version and the user accepted the terms and has the email the
    /// tenant requires, so the write happens as if it had read the policy itself (migration
    /// 0053). On Citus the subquery goes to the tenant's worker, as the policy's read does.
    static func keptRulesCheck(_ rules: WriteRules, tenantID: Int64, userID: Int64) -> PostgresQuery {
        """
        SELECT require_kept_rules(EXISTS (
            SELECT FROM users u, tenants t
            WHERE u.tenant_id = \(tenantID) AND u.id = \(userID) AND t.id = \(tenantID) AND \(rulesVersion(tenant: "t")) = \(rules.version)
              AND \(termsAccepted(tenant: "t", user: "u")) AND \(emailVerified(tenant: "t", user: "u", tenantID: tenantID))))
        """
    }

    /// Whether `error` is `keptRulesCheck` finding the kept rules out of date.
    static func rulesChanged(_ error: any Error) -> Bool {
        (error as? PostgresError)?.sqlState == "LR001"
    }

    /// The tenant's public facts (`GET /v1/tenant`), its providers read as the tenant.
    func info(of tenant: Tenant, on pool: PostgresPool, logger: Logger) async throws -> TenantInfo {
        let row = try await pool.query("""
            SELECT name, terms_url, terms_version, terms_required, contact_url, contact_email, email_verification_required,
                   mail_smtp_url IS NOT NULL
            FROM tenants WHERE id = \(tenant.id)
            """, logger: logger)[0]
        let providers = try await pool.query(
            "SELECT provider FROM identity_providers WHERE tenant_id = \(tenant.id) ORDER BY provider", tenant: tenant.id, logger: logger)
        return TenantInfo(
            slug: tenant.slug, name: try row.decode(String.self, column: 0), termsUrl: try row.decode(String?.self, column: 1),
            termsVersion: try row.decode(String?.self, column: 2), termsRequired: try row.decode(Bool.self, column: 3),
            contactUrl: try row.decode(String?.self, column: 4), contactEmail: try row.decode(String?.self, column: 5),
            guestsEnabled: tenant.guestsEnabled, signInProviders: try providers.map { try $0.decode(String.self, column: 0) },
            minPasswordLength: tenant.minPasswordLength, emailVerificationRequired: try row.decode(Bool.self, column: 6),
            passwordResetAvailable: try canMail && row.decode(Bool.self, column: 7))
    }

    /// The tenant's current terms version, in the caller's transaction.
    func termsVersion(tenantID: Int64, on connection: some PostgresQuerying) async throws -> String? {
        try await connection.query("SELECT terms_version FROM tenants WHERE id = \(tenantID)").first?.decode(String?.self, column: 0)
    }

    /// The tenant's word list and what it does (migration 0026), in the caller's transaction.
    func contentFilter(tenantID: Int64, on connection: some PostgresQuerying) async throws -> ContentFilter {
        let rows = try await connection.query("SELECT filter_action, filter_words FROM tenants WHERE id = \(tenantID)")
        return try rows.first.map(Self.filter(from:)) ?? .none
    }

    /// The filter of a row whose first columns are `filter_action, filter_words`.
    private static func filter(from row: PostgresRow) throws -> ContentFilter {
        let words = try row.decode([String].self, column: 1)
        guard !words.isEmpty else { return .none }
        // The column's CHECK allows only the actions there are.
        return ContentFilter(action: ContentFilter.Action(rawValue: try row.decode(String.self, column: 0)) ?? .refuse, words: words)
    }

    private static func tenant(from row: PostgresRow) throws -> Tenant {
        let (id, slug, minimum, guests) = try row.decode((Int64, String, Int, Bool).self)
        return Tenant(id: id, slug: slug, minPasswordLength: minimum, guestsEnabled: guests)
    }
}
