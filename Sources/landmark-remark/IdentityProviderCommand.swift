import ArgumentParser
import Foundation
import LandmarkRemark

struct IdentityProviderCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "identity-provider",
        abstract: "Choose the identity providers (Apple, Google, OpenID Connect) a tenant's users sign in with.",
        subcommands: [Set.self, AppleKey.self, Remove.self, List.self])

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Accept a provider for a tenant, with the client ids (token audiences) of its apps.")
        @Option(help: "The tenant's slug.") var tenant: String
        @Option(help: "apple, google, or oidc:<name> for another OpenID Connect provider.") var provider: String
        @Option(name: .customLong("client-id"), help: "A client id (iOS bundle id, web or services id, Android client id); repeat for several.")
        var clientIDs: [String]
        @Option(help: "oidc only: the issuer (iss) its tokens carry.") var issuer: String?
        @Option(name: .customLong("jwks-uri"), help: "oidc only: where its signing keys are published (https).") var jwksURI: String?
        @Option(help: "What the token's nonce holds for the app's nonce: hashed (SHA-256 hex), raw or either.") var nonce: String?

        func run() async throws {
            guard !clientIDs.isEmpty else { throw ValidationError("give at least one --client-id") }
            let (configuration, logger) = try loadConfiguration()
            try await AdminCommands.setIdentityProvider(
                tenant: tenant, provider: provider, clientIDs: clientIDs, issuer: issuer, keysURL: jwksURI, nonce: nonce,
                configuration: configuration, logger: logger)
            print("\(tenant) accepts \(provider) for \(clientIDs.joined(separator: ", "))")
        }
    }

    struct AppleKey: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "apple-key",
            abstract: "Set the tenant's Sign in with Apple key, used to keep and revoke Apple's tokens (needs LR_DATA_KEY on the service).")
        @Option(help: "The tenant's slug.") var tenant: String
        @Option(name: .customLong("team-id"), help: "The Apple developer team id.") var teamID: String
        @Option(name: .customLong("key-id"), help: "The key's id.") var keyID: String
        @Option(name: .customLong("private-key-file"), help: "The .p8 file Apple issued.") var privateKeyFile: String

        func run() async throws {
            let (configuration, logger) = try loadConfiguration()
            let pem = try String(contentsOfFile: privateKeyFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            guard try await AdminCommands.setAppleKey(
                tenant: tenant, teamID: teamID, keyID: keyID, privateKeyPEM: pem, configuration: configuration, logger: logger)
            else { throw ValidationError("\(tenant) does not accept apple yet: run identity-provider set --provider apple first") }
            print("\(tenant): Apple key \(keyID) set")
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Stop accepting a provider (linked identities stay, unusable until it is set again).")
        @Option(help: "The tenant's slug.") var tenant: String
        @Option(help: "The provider.") var provider: String

        func run() async throws {
            let (configuration, logger) = try loadConfiguration()
            let removed = try await AdminCommands.removeIdentityProvider(tenant: tenant, provider: provider, configuration: configuration, logger: logger)
            print(removed ? "\(tenant) no longer accepts \(provider)" : "\(tenant) did not accept \(provider)")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List every tenant's providers.")

        func run() async throws {
            let (configuration, logger) = try loadConfiguration()
            for row in try await AdminCommands.identityProviders(configuration: configuration, logger: logger) {
                var line = "\(row.tenant)\t\(row.provider)\tclient_ids=\(row.clientIDs.joined(separator: ","))\tnonce=\(row.nonce)"
                if let issuer = row.issuer { line += "\tissuer=\(issuer)" }
                if let keys = row.keysURL { line += "\tjwks_uri=\(keys)" }
                if row.appleKeySet { line += "\tapple_key=set" }
                line += "\tidentities=\(row.identities)"
                print(line)
            }
        }
    }
}
