import APNs
import Foundation
import Logging
import Postgres

/// What the executable's operator commands do, kept in the library so they are
/// tested through the same code. They run as the owner role and call the
/// `admin` schema's functions, the same ones an operator uses from psql.
public enum AdminCommands {
    /// Applies pending migrations; returns the names applied.
    public static func migrate(configuration: AppConfiguration, logger: Logger) async throws -> [String] {
        try await withOwnerPool(configuration, logger: logger) { pool in
            let migrator = try configuration.migrator()
            return try await migrator.migrate(pool: pool, logger: logger)
        }
    }

    /// What `distribute` did (`admin.distribute()`, one line per table or function) and what
    /// is still not as expected (`distribution_problems()`).
    public struct Distribution: Sendable, Equatable {
        public let citus: Bool
        public let steps: [String]
        public let problems: [String]
    }

    /// Distributes the schema on a Citus coordinator: idempotent, a no-op without Citus.
    public static func distribute(configuration: AppConfiguration, logger: Logger) async throws -> Distribution {
        try await withOwnerPool(configuration, logger: logger) { pool in
            try await AdminStore(pool: pool).distribute()
        }
    }

    public struct TenantSummary: Sendable, Equatable {
        public let slug: String
        public let name: String
        public let disabled: Bool
        public let users: Int
        public let notes: Int
    }

    /// Creates a tenant; with `ifMissing`, an existing slug is left as it is.
    @discardableResult
    public static func createTenant(slug: String, name: String, ifMissing: Bool = false, configuration: AppConfiguration, logger: Logger) async throws -> Bool {
        try await withOwnerPool(configuration, logger: logger) { pool in
            try await AdminStore(pool: pool).createTenant(slug: slug, name: name, ifMissing: ifMissing)
        }
    }

    /// Grants or withdraws a user's moderator role; false when the tenant has no such user.
    public static func setModerator(tenant: String, username: String, moderator: Bool, configuration: AppConfiguration, logger: Logger) async throws -> Bool {
        try await withOwnerPool(configuration, logger: logger) { pool in
            try await AdminStore(pool: pool).setModerator(tenant: tenant, username: username, moderator: moderator)
        }
    }

    /// Sets a tenant's APNs credentials (the team's id, the key's id and the key's PEM, Apple's
    /// `.p8` file) after checking them (`APNsCredentials.checked()`): the ids as stored, or
    /// nil when the tenant has no such slug.
    public static func setTenantAPNs(
        tenant: String, teamID: String, keyID: String, privateKeyPEM: String, configuration: AppConfiguration, logger: Logger
    ) async throws -> (teamID: String, keyID: String)? {
        let credentials: APNsCredentials
        do {
            credentials = try APNsCredentials(
                teamID: teamID.trimmingCharacters(in: .whitespacesAndNewlines).uppercased(),
                keyID: keyID.trimmingCharacters(in: .whitespacesAndNewlines).uppercased(),
                privateKeyPEM: privateKeyPEM
            ).checked()
        } catch let invalid as APNsCredentials.Invalid {
            throw InvalidCredentials(description: invalid.description)
        }
        guard try await setTenantAPNs(tenant: tenant, credentials: credentials, configuration: configuration, logger: logger) else {
            return nil
        }
        return (credentials.teamID, credentials.keyID)
    }

    /// Credentials APNs would refuse, said in the operator's terms; nothing was changed.
    public struct InvalidCredentials: Error, CustomStringConvertible {
        public let description: String
    }

    /// Clears a tenant's APNs credentials: its pushes stop (see docs/operations.md, "Push").
    public static func clearTenantAPNs(tenant: String, configuration: AppConfiguration, logger: Logger) async throws -> Bool {
        try await setTenantAPNs(tenant: tenant, credentials: nil, configuration: configuration, logger: logger)
    }

    private static func setTenantAPNs(
        tenant: String, credentials: APNsCredentials?, configuration: AppConfiguration, logger: Logger
    ) async throws -> Bool {
        return try await withOwnerPool(configuration, logger: logger) { pool in
            try await AdminStore(pool: pool).setAPNs(tenant: tenant, credentials: credentials)
        }
    }

    public static func listTenants(configuration: AppConfiguration, logger: Logger) async throws -> [TenantSummary] {
        try await withOwnerPool(configuration, logger: logger) { pool in
            try await AdminStore(pool: pool).tenants()
        }
    }

    static func withOwnerPool<T: Sendable>(_ configuration: AppConfiguration, logger: Logger, _ body: (PostgresPool) async throws -> T) async throws -> T {
        guard !configuration.database.migrateURL.isEmpty else {
            throw ConfigurationError(variable: "LR_MIGRATE_DATABASE_URL", message: "is required (the owner role's URL; LR_DATABASE_URL is used when unset)")
        }
        let pool = try PostgresPool(configuration: .init(conninfo: configuration.database.migrateURL, maxConnections: 2), logger: logger)
        do {
            let result = try await body(pool)
            await pool.close()
            return result
        } catch {
            await pool.close()
            throw error
        }
    }
}

extension AdminCommands {
    public struct ImportSummary: Sendable, Equatable {
        public let inserted: Int
        public let updated: Int
        public let unchanged: Int

        public init(inserted: Int, updated: Int, unchanged: Int) {
            self.inserted = inserted
            self.updated = updated
            self.unchanged = unchanged
        }
    }

    /// A problem with an import file, said in the operator's terms (row index and field).
    public struct ImportError: Error, CustomStringConvertible {
        public let description: String
    }

    /// Imports a JSON array of places into a tenant, all or nothing, through `admin.import_places`.
    public static func importPlaces(tenant slug: String, file: URL, configuration: AppConfiguration, logger: Logger) async throws -> ImportSummary {
        let text: String
        do {
            text = try String(contentsOf: file, encoding: .utf8)
        } catch {
            throw ImportError(description: "cannot read \(file.path) as UTF-8 text")
        }
        return try await withOwnerPool(configuration, logger: logger) { pool in
            do {
                return try await AdminStore(pool: pool).importPlaces(tenant: slug, json: text)
            } catch let error as PostgresError where error.kind == .server {
                // 22P02: the text is not JSON; P0001/22023/02000: the function's own messages name the row and field.
                if error.sqlState == "22P02" { throw ImportError(description: "\(file.lastPathComponent) is not valid JSON") }
                throw ImportError(description: error.message)
            }
        }
    }

    /// Gives the demo tenant its sample places and notes, once: the places by
    /// import (idempotent), the notes only while the demo author has none.
    public static func seedDemo(tenant slug: String, directory: URL, configuration: AppConfiguration, logger: Logger) async throws -> (ImportSummary, Int) {
        let places = try await importPlaces(tenant: slug, file: directory.appendingPathComponent("places.json"), configuration: configuration, logger: logger)
        let notes = try String(contentsOf: directory.appendingPathComponent("notes.json"), encoding: .utf8)
        let created = try await withOwnerPool(configuration, logger: logger) { pool in
            try await AdminStore(pool: pool).seedDemoNotes(tenant: slug, json: notes)
        }
        return (places, created)
    }
}
