import Foundation
import Logging
import Postgres

/// Operators' commands for sign-in with ID tokens: which providers a tenant accepts, with
/// which client ids, and its Sign in with Apple key. They call `admin.set_identity_provider`
/// and friends (migration 0011), as an operator would from psql.
extension AdminCommands {
    public struct IdentityProviderSummary: Sendable, Equatable {
        public let tenant: String
        public let provider: String
        public let clientIDs: [String]
        public let issuer: String?
        public let keysURL: String?
        public let nonce: String
        public let appleKeySet: Bool
        public let identities: Int
    }

    public static func setIdentityProvider(
        tenant: String, provider: String, clientIDs: [String], issuer: String?, keysURL: String?, nonce: String?,
        configuration: AppConfiguration, logger: Logger
    ) async throws {
        try await withOwnerPool(configuration, logger: logger) { pool in
            try await AdminStore(pool: pool).setIdentityProvider(
                tenant: tenant, provider: provider, clientIDs: clientIDs, issuer: issuer, keysURL: keysURL, nonce: nonce)
        }
    }

    /// False when the tenant does not accept that provider.
    public static func removeIdentityProvider(tenant: String, provider: String, configuration: AppConfiguration, logger: Logger) async throws -> Bool {
        try await withOwnerPool(configuration, logger: logger) { pool in
            try await AdminStore(pool: pool).removeIdentityProvider(tenant: tenant, provider: provider)
        }
    }

    /// False when the tenant does not accept `apple` yet.
    public static func setAppleKey(
        tenant: String, teamID: String, keyID: String, privateKeyPEM: String, configuration: AppConfiguration, logger: Logger
    ) async throws -> Bool {
        try await withOwnerPool(configuration, logger: logger) { pool in
            try await AdminStore(pool: pool).setAppleKey(tenant: tenant, teamID: teamID, keyID: keyID, privateKeyPEM: privateKeyPEM)
        }
    }

    public static func identityProviders(configuration: AppConfiguration, logger: Logger) async throws -> [IdentityProviderSummary] {
        try await withOwnerPool(configuration, logger: logger) { pool in
            try await AdminStore(pool: pool).identityProviders()
        }
    }

    /// `admin.set_tenant_setting`: `min_password_length` or `guests_enabled`.
    public static func setTenantSetting(tenant: String, setting: String, value: String, configuration: AppConfiguration, logger: Logger) async throws {
        try await withOwnerPool(configuration, logger: logger) { pool in
            do {
                try await AdminStore(pool: pool).setTenantSetting(tenant: tenant, setting: setting, value: value)
            } catch let error as PostgresError where ["22023", "22P02", "P0002", "23514"].contains(error.sqlState ?? "") {
                // admin.set_tenant_setting's own words (an unknown setting, a bad value, no such
                // tenant) are written for the operator; the CLI would otherwise print only the SQLSTATE.
                throw SettingError(description: "\(setting): \(error.message)")
            }
        }
    }

    public struct SettingError: Error, CustomStringConvertible {
        public let description: String
    }
}
