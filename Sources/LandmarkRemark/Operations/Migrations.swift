import Foundation
import Postgres

extension AppConfiguration {
    /// The schema's migrations (`sql/migrations`), as `migrate` applies them and `/readyz`
    /// compares them. 0001 creates the extensions, which on Citus the superuser has created
    /// on every node already (docs/operations.md), so it runs on the coordinator alone.
    func migrator() throws -> PostgresMigrator {
        try PostgresMigrator(directory: URL(fileURLWithPath: database.migrationsDirectory), nodeLocal: ["0001_foundation.sql"])
    }
}
