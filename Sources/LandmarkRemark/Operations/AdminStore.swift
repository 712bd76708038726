import APNs
import Postgres

/// The operator commands' SQL, run as the owner role: the `admin` schema's functions and
/// views (the same ones an operator calls from psql), and the demo tenant's seed.
struct AdminStore: Sendable {
    let pool: PostgresPool

    /// Creates a tenant; with `ifMissing`, an existing slug is left as it is (false).
    func createTenant(slug: String, name: String, ifMissing: Bool) async throws -> Bool {
        if ifMissing {
            let existing = try await pool.query("SELECT 1 FROM tenants WHERE slug = \(slug)")
            if !existing.isEmpty { return false }
        }
        try await pool.query("SELECT slug FROM admin.create_tenant(\(slug), \(name))")
        return true
    }

    func tenants() async throws -> [AdminCommands.TenantSummary] {
        let rows = try await pool.query("SELECT slug, name, disabled, users, notes FROM admin.tenant_overview ORDER BY slug")
        return try rows.map { row in
            let (slug, name, disabled, users, notes) = try row.decode((String, String, Bool, Int, Int).self)
            return AdminCommands.TenantSummary(slug: slug, name: name, disabled: disabled, users: users, notes: notes)
        }
    }

    /// `admin.import_places`: all or nothing; its errors name the row and field.
    func importPlaces(tenant slug: String, json: String) async throws -> AdminCommands.ImportSummary {
        let rows = try await pool.query("SELECT inserted, updated, unchanged FROM admin.import_places(\(slug), \(json)::jsonb)")
        let (inserted, updated, unchanged) = try rows[0].decode((Int, Int, Int).self)
        return AdminCommands.ImportSummary(inserted: inserted, updated: updated, unchanged: unchanged)
    }

    /// The demo notes, by an author who cannot log in, only while that author has none.
    func seedDemoNotes(tenant slug: String, json notes: String) async throws -> Int {
        try await pool.withTransaction { connection in
            // The demo author cannot log in: '!' is no scrypt hash, so every password fails.
            try await connection.query("""
                INSERT INTO users (tenant_id, username, password_hash)
                SELECT id, 'landmark-demo', '!' FROM tenants WHERE slug = \(slug)
                ON CONFLICT DO NOTHING
                """)
            let rows = try await connection.query("""
                WITH author AS (
                    SELECT u.tenant_id, u.id FROM users u JOIN tenants t ON t.id = u.tenant_id
                    WHERE t.slug = \(slug) AND lower(u.username) = 'landmark-demo'
                ),
                inserted AS (
                    INSERT INTO notes (tenant_id, user_id, body, location, place_id)
                    SELECT a.tenant_id, a.id, n.value->>'body',
                           ST_SetSRID(ST_MakePoint((n.value->>'lng')::float8, (n.value->>'lat')::float8), 4326)::geography,
                           (SELECT p.id FROM places p WHERE p.tenant_id = a.tenant_id AND p.import_key = n.value->>'place')
                    FROM author a, jsonb_array_elements(\(notes)::jsonb) AS n(value)
                    WHERE NOT EXISTS (SELECT 1 FROM notes x WHERE x.tenant_id = a.tenant_id AND x.user_id = a.id)
                    RETURNING 1
                )
                SELECT count(*) FROM inserted
                """)
            return try rows[0].decode(Int.self, column: 0)
        }
    }

    func setIdentityProvider(tenant: String, provider: String, clientIDs: [String], issuer: String?, keysURL: String?, nonce: String?) async throws {
        try await pool.query("""
            SELECT 1 FROM admin.set_identity_provider(\(tenant), \(provider), \(clientIDs), \(issuer), \(keysURL), \(nonce))
            """)
    }

    func removeIdentityProvider(tenant: String, provider: String) async throws -> Bool {
        try await pool.query("SELECT admin.remove_identity_provider(\(tenant), \(provider))")[0].decode(Bool.self)
    }

    func setAppleKey(tenant: String, teamID: String, keyID: String, privateKeyPEM: String) async throws -> Bool {
        try await pool.query("SELECT admin.set_apple_sign_in_key(\(tenant), \(teamID), \(keyID), \(privateKeyPEM))")[0].decode(Bool.self)
    }

    func identityProviders() async throws -> [AdminCommands.IdentityProviderSummary] {
        let rows = try await pool.query("""
            SELECT tenant, provider, client_ids, issuer, jwks_uri, nonce, apple_key_set, identities
            FROM admin.identity_providers ORDER BY tenant, provider
            """)
        return try rows.map { row in
            let (tenant, provider, clientIDs, issuer, keysURL, nonce, appleKeySet, identities) =
                try row.decode((String, String, [String], String?, String?, String, Bool, Int).self)
            return AdminCommands.IdentityProviderSummary(
                tenant: tenant, provider: provider, clientIDs: clientIDs, issuer: issuer, keysURL: keysURL, nonce: nonce,
                appleKeySet: appleKeySet, identities: identities)
        }
    }

    func setTenantSetting(tenant: String, setting: String, value: String) async throws {
        try await pool.query("SELECT 1 FROM admin.set_tenant_setting(\(tenant), \(setting), \(value))")
    }

    /// One batch of `purge_expired`: rows past their horizon deleted from sessions, session
    /// tokens, login failures, login addresses and idempotency keys, in that order.
    func purgeExpired(batch: Int) async throws -> [Int] {
        let row = try await pool.query("SELECT * FROM purge_expired(\(batch))")[0]
        return try (0..<5).map { try row.decode(Int.self, column: $0) }
    }

    /// One batch of `purge_auth_revocations` (migration 0046): revocations older than the
    /// access tokens' lifetime and an hour.
    func purgeAuthRevocations(keepingSeconds: Int, batch: Int) async throws -> Int {
        try await pool.query("SELECT purge_auth_revocations(\(keepingSeconds), \(batch))")[0].decode(Int.self, column: 0)
    }

    /// One batch of `purge_push_records` (migration 0050: matches a day old dropped, finished
    /// ones after 7 days, pushes after 30) and of `purge_push_notes` (0052: notes' watchers not
    /// expanded within a day); the most rows of one table.
    func purgePushRecords(batch: Int) async throws -> Int {
        try await pool.query("SELECT greatest(purge_push_records(\(batch)), purge_push_notes(\(batch)))")[0].decode(Int.self, column: 0)
    }

    /// One batch of `purge_sign_in_records` (migrations 0011, 0012): spent ID tokens, guest
    /// counts, then stream tickets.
    func purgeSignInRecords(batch: Int) async throws -> [Int] {
        let row = try await pool.query("SELECT * FROM purge_sign_in_records(\(batch))")[0]
        return try (0..<3).map { try row.decode(Int.self, column: $0) }
    }

    /// Events older than the retention, per tenant a prefix of its ids (migration 0018): one
    /// statement, so one transaction, per tenant. Where Citus holds the log a transaction
    /// open on a worker holds back the streams of that worker's tenants, so no purge should
    /// last as long as one of every tenant (`purge_events()`) would.
    func purgeEvents() async throws -> Int {
        let tenants = try await pool.query("SELECT event_purge_tenants()").map { try $0.decode(Int64.self, column: 0) }
        var purged = 0
        for tenant in tenants {
            purged += try await pool.query("SELECT purge_tenant_events(\(tenant))")[0].decode(Int.self, column: 0)
        }
        return purged
    }
}

extension AdminStore {
    /// Accounts whose suspension has ended, enabled again (migration 0025).
    func liftEndedSuspensions() async throws -> Int {
        try await pool.query("SELECT lift_ended_suspensions()")[0].decode(Int.self, column: 0)
    }

    /// Grants or withdraws a user's moderator role (`admin.set_moderator`); false for no such user.
    func setModerator(tenant slug: String, username: String, moderator: Bool) async throws -> Bool {
        try await pool.query("SELECT admin.set_moderator(\(slug), \(username), \(moderator))")[0].decode(Bool.self, column: 0)
    }

    /// Sets the tenant's APNs credentials, or clears them (nil); false when there is no such tenant.
    func setAPNs(tenant slug: String, credentials: APNsCredentials?) async throws -> Bool {
        do {
            try await pool.query("""
                SELECT admin.set_tenant_apns(\(slug), \(credentials?.teamID), \(credentials?.keyID), \(credentials?.privateKeyPEM))
                """)
            return true
        } catch let error as PostgresError where error.sqlState == "P0002" {  // no_data_found: no such tenant
            return false
        }
    }

    /// Per tenant, its open reports and the age in seconds of the oldest (for /metrics).
    static func openReports(_ pool: PostgresPool) async throws -> [(tenant: String, open: Int, oldestSeconds: Double)] {
        try await pool.query("SELECT tenant, open_reports, oldest_seconds FROM open_report_stats()").map {
            try $0.decode((String, Int, Double).self)
        }
    }

    /// Each tenant's stored photos and their bytes (`photo_usage_stats()`, migration 0032).
    static func photoUsage(_ pool: PostgresPool) async throws -> [(tenant: String, photos: Int, bytes: Int)] {
        try await pool.query("SELECT tenant, photos, bytes FROM photo_usage_stats()").map {
            try $0.decode((String, Int, Int).self)
        }
    }

    /// `admin.distribute()`, the statement functions, then `distribution_problems()` (migration 0016).
    func distribute() async throws -> AdminCommands.Distribution {
        let citus = try await pool.query("SELECT EXISTS (SELECT FROM pg_extension WHERE extname = 'citus')")[0].decode(Bool.self, column: 0)
        var steps = try await pool.query("SELECT admin.distribute()").map { try $0.decode(String.self, column: 0) }
        if citus { steps += try await installStatementFunctions() }
        let problems = try await Self.distributionProblems(pool)
        return AdminCommands.Distribution(citus: citus, steps: steps, problems: problems)
    }

    /// What is not distributed as expected on a Citus coordinator; none elsewhere.
    static func distributionProblems(_ pool: PostgresPool) async throws -> [String] {
        try await pool.query("SELECT distribution_problems()").map { try $0.decode(String.self, column: 0) }
    }
}

extension AdminStore {
    /// Installs the list statements that read on the tenant's worker as functions
    /// (`WorkerReads`, migration 0022) and, on Citus, delegates them; what it did.
    ///
    /// A function's columns are the statement's: it runs once, for a tenant that does not
    /// exist, and its empty result says their types.
    func installStatementFunctions() async throws -> [String] {
        var steps: [String] = []
        for statement in try WorkerReads.statements() {
            let function = PostgresStatementFunction(prefix: WorkerReads.prefix, statement: statement)
            let columns = try await pool.withTransaction(settings: [("app.tenant_id", "0")]) {
                try await $0.query(statement).columns.map { Int64($0.oid) }
            }
            let done = try await pool.query("""
                SELECT admin.install_statement_function(
                    \(function.name), \(function.parameterTypes.map { Int64($0) })::oid[], \(columns)::oid[],
                    \(function.body), \(function.plansEachRun), 'notes')
                """)[0].decode(String?.self, column: 0)
            if let done { steps.append(done) }
        }
        return steps
    }
}
