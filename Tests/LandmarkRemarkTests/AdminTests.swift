import Foundation
import HTTPTypes
import HummingbirdTesting
import JWTKit
import LandmarkRemark
import Testing

/// The operator's tools: the CLI's commands and the `admin` schema behind them.
@Suite(.timeLimit(.minutes(10))) struct AdminTests {
    @Test func tenantCommandsCreateListAndAreIdempotentWithIfMissing() async throws {
        try await TestEnvironment.migrate()
        let configuration = try TestEnvironment.configuration()
        let slug = "cli-\(UInt32.random(in: 0...UInt32.max))"
        #expect(try await AdminCommands.createTenant(slug: slug, name: "CLI", configuration: configuration, logger: TestEnvironment.logger))
        #expect(try await !AdminCommands.createTenant(slug: slug, name: "CLI", ifMissing: true, configuration: configuration, logger: TestEnvironment.logger))
        await #expect(throws: (any Error).self) {
            try await AdminCommands.createTenant(slug: slug, name: "again", configuration: configuration, logger: TestEnvironment.logger)
        }
        await #expect(throws: (any Error).self) {
            try await AdminCommands.createTenant(slug: "Not A Slug", name: "bad", configuration: configuration, logger: TestEnvironment.logger)
        }
        let listed = try await AdminCommands.listTenants(configuration: configuration, logger: TestEnvironment.logger)
        #expect(listed.contains { $0.slug == slug && $0.name == "CLI" && !$0.disabled && $0.users == 0 })
        #expect(try await AdminCommands.migrate(configuration: configuration, logger: TestEnvironment.logger) == [])
    }

    /// `tenant apns`: credentials APNs would refuse are refused before anything is stored;
    /// good ones are stored as `admin.set_tenant_apns` stores them, and `--clear` clears them.
    @Test func apnsCredentialsAreCheckedThenSetAndCleared() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        let (configuration, logger) = (try TestEnvironment.configuration(), TestEnvironment.logger)
        let pem = ES256PrivateKey().pemRepresentation.trimmingCharacters(in: .whitespacesAndNewlines)
        func stored() async throws -> [String?] {
            try await TestEnvironment.withOwnerPool { pool in
                let row = try await pool.query("SELECT apns_team_id, apns_key_id, apns_private_key FROM tenants WHERE slug = \(tenant)")[0]
                let (team, key, pem) = try row.decode((String?, String?, String?).self)
                return [team, key, pem]
            }
        }
        let refused: [(team: String, key: String, pem: String)] = [
            ("TEAM12345", "KEY1234567", pem),  // nine characters
            ("TEAM123456", "KEY-234567", pem),  // not a letter or digit
            ("TEAM123456", "KEY1234567", "-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----"),
            ("TEAM123456", "KEY1234567", ES384PrivateKey().pemRepresentation),  // P-384, not P-256
        ]
        for attempt in refused {
            await #expect(throws: AdminCommands.InvalidCredentials.self) {
                try await AdminCommands.setTenantAPNs(
                    tenant: tenant, teamID: attempt.team, keyID: attempt.key, privateKeyPEM: attempt.pem, configuration: configuration,
                    logger: logger)
            }
        }
        #expect(try await stored() == [nil, nil, nil])
        // Ids as an operator may type them; the key as read from its file, with its newline.
        let set = try await AdminCommands.setTenantAPNs(
            tenant: tenant, teamID: " team123456 ", keyID: "key1234567", privateKeyPEM: pem + "\n", configuration: configuration,
            logger: logger)
        #expect(set?.teamID == "TEAM123456" && set?.keyID == "KEY1234567")
        #expect(try await stored() == ["TEAM123456", "KEY1234567", pem])
        // A key in the older SEC 1 form (`openssl ecparam -genkey`; a throwaway test key) is
        // stored as PKCS #8, the only form the table takes.
        let sec1 = """
            -----BEGIN EC PRIVATE KEY-----
            MHcCAQEEIKaEgnKeUvv3IawgcaYAsX88t2DtY9Zg6E8HQUvzBfQyoAoGCCqGSM49
            AwEHoUQDQgAEXah+iXevbn3sldIyx+l3kJ5oNwBOkZl/k9XQ2hO31ZcN1CLamDkI
            nxJLRfm5SPr50QiDV3MCyePfHPseFOZUig==
            -----END EC PRIVATE KEY-----
            """
        #expect(try await AdminCommands.setTenantAPNs(
            tenant: tenant, teamID: "TEAM123456", keyID: "KEY1234567", privateKeyPEM: sec1, configuration: configuration,
            logger: logger) != nil)
        let pkcs8 = try ES256PrivateKey(pem: sec1).pemRepresentation.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(pkcs8.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        #expect(try await stored() == ["TEAM123456", "KEY1234567", pkcs8])
        #expect(try await AdminCommands.setTenantAPNs(
            tenant: "no-such-tenant-\(UInt32.random(in: 0...UInt32.max))", teamID: "TEAM123456", keyID: "KEY1234567", privateKeyPEM: pem,
            configuration: configuration, logger: logger) == nil)
        #expect(try await AdminCommands.clearTenantAPNs(tenant: tenant, configuration: configuration, logger: logger))
        #expect(try await stored() == [nil, nil, nil])
    }

    @Test func adminFunctionsRenameEndSessionsAndReport() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let account = try await client.signup("nina", tenant: tenant)
            let ended = try await TestEnvironment.withOwnerPool { pool in
                try await pool.query("SELECT admin.end_user_sessions(\(tenant), 'NINA')")[0].decode(Int.self, column: 0)
            }
            #expect(ended == 1)
            #expect(try await client.call(.get, "/v1/me", token: account.accessToken).status == .unauthorized)
            let overview = try await TestEnvironment.withOwnerPool { pool in
                try await pool.query("SELECT admin.rename_tenant(\(tenant), 'Renamed')")
                try await pool.query("SELECT admin.set_tenant_setting(\(tenant), 'min_password_length', '15')")
                let rows = try await pool.query("SELECT name, users, active_sessions, min_password_length FROM admin.tenant_overview WHERE slug = \(tenant)")
                return try rows[0].decode((String, Int, Int, Int).self)
            }
            #expect(overview.0 == "Renamed")
            #expect(overview.1 == 1)
            #expect(overview.2 == 0)
            #expect(overview.3 == 15)
            // The raised minimum applies at once.
            let short = try await client.call(.post, "/v1/auth/signup", json: ["username": "short", "password": "fourteen chars"], tenant: tenant)
            #expect(short.code == "validation_failed")
            await #expect(throws: (any Error).self) {
                try await TestEnvironment.withOwnerPool { try await $0.query("SELECT admin.set_tenant_setting(\(tenant), 'colour', 'blue')") }
            }
        }
    }
}

@Suite(.timeLimit(.minutes(10))) struct HashingLimitTests {
    /// With one hashing slot and no patience, a burst of signups gets 503 (the pool is
    /// saturated) or 429 (past the address's or tenant's share of it) rather than piling up memory.
    @Test func saturatedHashingAnswers503Or429WithRetryAfter() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withApp({
            $0.accounts.scrypt = .init(logN: 14, r: 8, p: 1)
            $0.accounts.hashConcurrency = 1
            $0.accounts.hashQueueTimeout = .milliseconds(1)
            $0.shares.queueTimeout = .milliseconds(1)
        }) { client in
            let statuses = try await withThrowingTaskGroup(of: APIResponse.self) { group in
                for index in 0..<6 {
                    group.addTask {
                        try await client.call(.post, "/v1/auth/signup", json: ["username": "burst\(index)", "password": "a sturdy passphrase"], tenant: tenant)
                    }
                }
                return try await group.reduce(into: [APIResponse]()) { $0.append($1) }
            }
            let refused = statuses.filter { $0.status != .created }
            #expect(!refused.isEmpty)
            #expect(refused.allSatisfy {
                ($0.status == .serviceUnavailable && $0.code == "unavailable" || $0.status == .tooManyRequests && $0.code == "rate_limited")
                    && $0.headers[.retryAfter] != nil
            })
        }
    }
}
