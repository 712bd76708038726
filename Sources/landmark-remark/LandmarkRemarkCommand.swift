import ArgumentParser
import Foundation
import LandmarkRemark
import Logging
import Metrics
import Prometheus

/// The executable: reads settings from `LR_*` variables and hands over to the library.
@main
struct LandmarkRemarkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "landmark-remark",
        abstract: "Landmark Remark: notes at places on a map, for many apps at once.",
        subcommands: [Serve.self, Settings.self, Migrate.self, Distribute.self, TenantCommand.self, IdentityProviderCommand.self, PlacesCommand.self, SeedDemo.self],
        defaultSubcommand: Serve.self)
}

/// Settings and logging shared by every subcommand.
func loadConfiguration() throws -> (AppConfiguration, Logger) {
    let configuration: AppConfiguration
    do {
        configuration = try AppConfiguration(environment: ProcessInfo.processInfo.environment)
    } catch let error as ConfigurationError {
        throw ValidationError("invalid setting: \(error)")
    }
    var logger = Logger(label: "landmark-remark")
    logger.logLevel = configuration.server.logLevel
    return (configuration, logger)
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Serve the HTTP API (settings from LR_* variables).")

    func run() async throws {
        let (configuration, logger) = try loadConfiguration()
        let shutdown = GracefulShutdown(timeout: configuration.server.shutdownTimeout)
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        let app = try await buildApplication(configuration: configuration, logger: logger, registry: registry)
        try await shutdown.run(app, logger: logger)
    }
}

struct Settings: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print every LR_* setting with its meaning and default: as .env.example, or as the operations guide's table.")

    enum Format: String, ExpressibleByArgument { case env, markdown }

    @Option(help: "env: the service's part of .env.example; markdown: the tables of docs/operations.md.")
    var format: Format = .env

    func run() {
        print(format == .env ? SettingsDocument.environmentExample() : SettingsDocument.markdownTable(), terminator: "")
    }
}

struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Apply pending migrations as the owner role (LR_MIGRATE_DATABASE_URL).")

    func run() async throws {
        let (configuration, logger) = try loadConfiguration()
        let applied = try await AdminCommands.migrate(configuration: configuration, logger: logger)
        print(applied.isEmpty ? "schema is current" : "applied: \(applied.joined(separator: ", "))")
    }
}

struct Distribute: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "On a Citus coordinator, distribute the tables by tenant (after every migrate; a no-op elsewhere).")

    func run() async throws {
        let (configuration, logger) = try loadConfiguration()
        let outcome = try await AdminCommands.distribute(configuration: configuration, logger: logger)
        for step in outcome.steps { print(step) }
        if outcome.citus && outcome.steps.isEmpty { print("already distributed") }
        if !outcome.citus { print("no citus extension in this database: nothing to distribute") }
        guard outcome.problems.isEmpty else {
            for problem in outcome.problems { print("problem: \(problem)") }
            throw ExitCode.failure
        }
    }
}

struct TenantCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tenant", abstract: "Create and list tenants, and change their settings.",
        subcommands: [Create.self, List.self, Set.self, Moderator.self, APNs.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a tenant.")
        @Argument(help: "The slug apps send in X-Tenant: lowercase letters, digits and hyphens.") var slug: String
        @Option(help: "A display name.") var name: String
        @Flag(help: "Succeed without change when the tenant exists already.") var ifMissing = false

        func run() async throws {
            let (configuration, logger) = try loadConfiguration()
            let created = try await AdminCommands.createTenant(
                slug: slug, name: name, ifMissing: ifMissing, configuration: configuration, logger: logger)
            print(created ? "created tenant \(slug)" : "tenant \(slug) exists")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List tenants with their user and note counts.")

        func run() async throws {
            let (configuration, logger) = try loadConfiguration()
            for tenant in try await AdminCommands.listTenants(configuration: configuration, logger: logger) {
                print("\(tenant.slug)\t\(tenant.name)\t\(tenant.disabled ? "disabled" : "active")\tusers=\(tenant.users)\tnotes=\(tenant.notes)")
            }
        }
    }
}

extension TenantCommand {
    struct Moderator: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a user a moderator of the tenant (or no longer, with --revoke): GET /v1/moderation/reports and decisions.")
        @Argument(help: "The tenant's slug.") var slug: String
        @Argument(help: "The user's username (any case).") var username: String
        @Flag(help: "Withdraw the role.") var revoke = false

        func run() async throws {
            let (configuration, logger) = try loadConfiguration()
            guard try await AdminCommands.setModerator(
                tenant: slug, username: username, moderator: !revoke, configuration: configuration, logger: logger)
            else { throw ValidationError("no user \(username) in tenant \(slug)") }
            print("\(slug): \(username) \(revoke ? "is no longer a moderator" : "is a moderator")")
        }
    }

    struct APNs: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "apns",
            abstract: "Set the tenant's APNs credentials (token-based: the team's id, the key's id and its .p8 file), checked first; or clear them (--clear), which stops its pushes.")
        @Argument(help: "The tenant's slug.") var slug: String
        @Option(help: "The Apple Developer team's id (ten letters or digits).") var teamId: String?
        @Option(help: "The APNs key's id (ten letters or digits).") var keyId: String?
        @Option(help: "The key's .p8 file, read here (not on the database's server).") var keyFile: String?
        @Flag(help: "Clear the credentials instead.") var clear = false

        func validate() throws {
            let given = [teamId, keyId, keyFile].compactMap { $0 }.count
            if clear ? given > 0 : given < 3 {
                throw ValidationError("give --team-id, --key-id and --key-file, or --clear alone")
            }
        }

        func run() async throws {
            let (configuration, logger) = try loadConfiguration()
            if clear {
                guard try await AdminCommands.clearTenantAPNs(tenant: slug, configuration: configuration, logger: logger) else {
                    throw ValidationError("no tenant \(slug)")
                }
                return print("\(slug): APNs credentials cleared")
            }
            let pem: String
            do {
                pem = try String(contentsOf: URL(fileURLWithPath: keyFile!), encoding: .utf8)
            } catch {
                throw ValidationError("cannot read \(keyFile!): \(error.localizedDescription)")
            }
            do {
                guard let stored = try await AdminCommands.setTenantAPNs(
                    tenant: slug, teamID: teamId!, keyID: keyId!, privateKeyPEM: pem, configuration: configuration, logger: logger)
                else { throw ValidationError("no tenant \(slug)") }
                print("\(slug): APNs credentials set (team \(stored.teamID), key \(stored.keyID))")
            } catch let invalid as AdminCommands.InvalidCredentials {
                throw ValidationError("nothing changed: \(invalid)")
            }
        }
    }

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change a tenant setting: min_password_length (8-128), guests_enabled (true/false), allowed_origins (comma-separated web origins that may call the API; empty for none) report_threshold (1-1000 distinct reporters hold a target for a moderator), filter_words (comma-separated words and phrases notes, places and usernames may not hold; empty for none) or filter_action (refuse or hold).")
        @Argument(help: "The tenant's slug.") var slug: String
        @Argument(help: "min_password_length, guests_enabled, allowed_origins, report_threshold, filter_words or filter_action.") var setting: String
        @Argument(help: "The new value.") var value: String

        func run() async throws {
            let (configuration, logger) = try loadConfiguration()
            try await AdminCommands.setTenantSetting(tenant: slug, setting: setting, value: value, configuration: configuration, logger: logger)
            print("\(slug): \(setting) = \(value)")
        }
    }
}

struct PlacesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "places", abstract: "Manage a tenant's default places.", subcommands: [Import.self])

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Import a JSON array of {\"name\", \"lat\", \"lng\", \"key\"?, …} as default places, all or nothing.")
        @Option(help: "The tenant's slug.") var tenant: String
        @Argument(help: "The JSON file.") var file: String

        func run() async throws {
            let (configuration, logger) = try loadConfiguration()
            do {
                let summary = try await AdminCommands.importPlaces(
                    tenant: tenant, file: URL(fileURLWithPath: file), configuration: configuration, logger: logger)
                print("imported into \(tenant): \(summary.inserted) new, \(summary.updated) updated, \(summary.unchanged) unchanged")
            } catch let error as AdminCommands.ImportError {
                throw ValidationError("nothing imported: \(error)")
            }
        }
    }
}

struct SeedDemo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "seed-demo", abstract: "Give the demo tenant sample places and notes (sql/demo), once.")
    @Option(help: "The tenant's slug.") var tenant = "demo"
    @Option(help: "The folder with places.json and notes.json.") var directory = "sql/demo"

    func run() async throws {
        let (configuration, logger) = try loadConfiguration()
        let (places, notes) = try await AdminCommands.seedDemo(
            tenant: tenant, directory: URL(fileURLWithPath: directory), configuration: configuration, logger: logger)
        print("demo: \(places.inserted) places added, \(notes) notes added")
    }
}
