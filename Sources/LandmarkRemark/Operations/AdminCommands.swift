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
            let migrator = try PostgresMigrator(directory: URL(fileURLWithPath: configuration.migrationsDirectory))
            return try await migrator.migrate(pool: pool, logger: logger)
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
            if ifMissing {
                let existing = try await pool.query("SELECT 1 FROM tenants WHERE slug = \(slug)")
                if !existing.isEmpty { return false }
            }
            try await pool.query("SELECT slug FROM admin.create_tenant(\(slug), \(name))")
            return true
        }
    }

    public static func listTenants(configuration: AppConfiguration, logger: Logger) async throws -> [TenantSummary] {
        try await withOwnerPool(configuration, logger: logger) { pool in
            let rows = try await pool.query("SELECT slug, name, disabled, users, notes FROM admin.tenant_overview ORDER BY slug")
            return try rows.map { row in
                let (slug, name, disabled, users, notes) = try row.decode((String, String, Bool, Int, Int).self)
                return TenantSummary(slug: slug, name: name, disabled: disabled, users: users, notes: notes)
            }
        }
    }

    static func withOwnerPool<T: Sendable>(_ configuration: AppConfiguration, logger: Logger, _ body: (PostgresPool) async throws -> T) async throws -> T {
        guard !configuration.migrateDatabaseURL.isEmpty else {
            throw ConfigurationError(variable: "LR_MIGRATE_DATABASE_URL", message: "is required (the owner role's URL; LR_DATABASE_URL is used when unset)")
        }
        let pool = try PostgresPool(configuration: .init(conninfo: configuration.migrateDatabaseURL, maxConnections: 2), logger: logger)
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
