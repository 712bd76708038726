import Foundation
import Postgres

extension AppConfiguration {
    /// The schema's migrations (`sql/migrations`), as `migrate` applies them and `/readyz`
    /// compares them. 0001 creates the extensions, which on Citus the superuser has created
    /// on every node already (docs/operations.md), so it runs on the coordinator alone.
    func migrator() throws -> PostgresMigrator {
        try PostgresMigrator(
            directory: URL(fileURLWithPath: database.migrationsDirectory), nodeLocal: ["0001_foundation.sql"],
            revised: Self.revisedMigrations)
    }

    /// Files corrected after their release, with their earlier texts' checksums.
    /// - 0032: `SET STORAGE EXTERNAL` on photo_variants.data moved before the table is
    ///   distributed (Citus refuses it after, so a distributed deployment could not upgrade);
    ///   a database that applied the earlier order has the same schema.
    static let revisedMigrations: [String: Set<String>] = [
        "0032_photos.sql": ["3d216dabed9a6c33f5a1dc9a27711a2214cf1729d4bfdd23285f13c650b39d2a"],
    ]
}
