import Credentials
import Foundation
import HummingbirdTesting
@testable import LandmarkRemark
import Postgres
import Testing

/// Tokens carry their tenant (`lr_at_<tenant>_…`, `lr_rt_…`, `lr_st_…`) and are looked up in
/// that tenant alone; tokens of the legacy form (43 characters after the prefix) keep
/// working for their lifetime through the lookups by hash alone (migration 0016).
@Suite(.timeLimit(.minutes(10))) struct TenantTokenTests {
    @Test func tokensAndTicketsNameTheirTenant() async throws {
        let slug = try await TestEnvironment.makeTenant()
        let tenantID = try await Self.tenantID(slug)
        try await withApp { client in
            let account = try await client.signup("named", tenant: slug)
            let refreshed = try await client.call(.post, "/v1/auth/refresh", json: ["refresh_token": account.refreshToken], tenant: slug)
                .decode(API.TokenResponse.self)
            let ticket = try await client.call(.post, "/v1/events/tickets", token: account.accessToken).decode(API.StreamTicket.self)
            for (token, prefix) in [(account.refreshToken, "lr_rt_"), (refreshed.refreshToken, "lr_rt_"), (ticket.ticket, "lr_st_")] {
                #expect(token.hasPrefix("\(prefix)\(tenantID)_") && token.count == "\(prefix)\(tenantID)_".count + 43, "\(token)")
                #expect(Tokens.tenantPart(of: token, prefix: prefix) == .tenant(tenantID))
            }
            // Access tokens are signed (SignedAccessTokenTests), and name their tenant the same way.
            for token in [account.accessToken, refreshed.accessToken] {
                #expect(token.hasPrefix("lr_at_\(tenantID)_"), "\(token)")
                #expect(AccessTokenSigner.tenantID(of: token) == tenantID)
            }
        }
    }

    @Test func anAccessTokenWhoseTenantPartIsChangedIsUnknown() async throws {
        let a = try await TestEnvironment.makeTenant()
        let b = try await TestEnvironment.makeTenant()
        let idB = try await Self.tenantID(b)
        try await withApp { client in
            let account = try await client.signup("forger", tenant: a)
            // B has a user of that name, with a session of its own.
            _ = try await client.signup("forger", tenant: b)
            for claimed in [idB, Int64.max] {
                let forged = Self.forged(account.accessToken, prefix: "lr_at_", tenantID: claimed)
                #expect(try await client.call(.get, "/v1/me", token: forged).code == "unauthenticated")
                #expect(try await client.call(.get, "/v1/me", token: forged, tenant: b).code == "unauthenticated")
            }
            // Tenant parts that are no tenant id at all.
            for part in ["0_", "0\(idB)_", "-\(idB)_", "x_", "_", "\(idB)"] {
                let malformed = "lr_at_" + part + account.accessToken.suffix(43)
                #expect(try await client.call(.get, "/v1/me", token: malformed).code == "unauthenticated", "\(malformed)")
            }
            #expect(try await client.call(.get, "/v1/me", token: account.accessToken).status == .ok)
        }
    }

    @Test func aLegacyAccessTokenStillAuthenticates() async throws {
        let a = try await TestEnvironment.makeTenant()
        let b = try await TestEnvironment.makeTenant()
        try await withApp { client in
            let account = try await client.signup("elder", tenant: a)
            let legacy = try await Self.legacyToken(kind: "access", sameSessionAs: account)
            #expect(Tokens.tenantPart(of: legacy, prefix: "lr_at_") == .legacy)
            let me = try await client.call(.get, "/v1/me", token: legacy)
            #expect(me.status == .ok)
            #expect(try me.decode(API.Me.self).username == "elder")
            #expect(try await client.call(.get, "/v1/me", token: legacy, tenant: a).status == .ok)
            #expect(try await client.call(.get, "/v1/me", token: legacy, tenant: b).code == "tenant_mismatch")
            // It ends its session like any access token.
            #expect(try await client.call(.post, "/v1/auth/logout", token: legacy).status == .noContent)
            #expect(try await client.call(.get, "/v1/me", token: legacy).code == "unauthenticated")
            #expect(try await client.call(.get, "/v1/me", token: account.accessToken).code == "unauthenticated")
        }
    }

    @Test func aLegacyRefreshTokenStillRefreshesInItsOwnTenantOnly() async throws {
        let a = try await TestEnvironment.makeTenant()
        let b = try await TestEnvironment.makeTenant()
        let idA = try await Self.tenantID(a)
        try await withApp { client in
            let account = try await client.signup("elder-rt", tenant: a)
            let legacy = try await Self.legacyToken(kind: "refresh", sameSessionAs: account)
            #expect(Tokens.tenantPart(of: legacy, prefix: "lr_rt_") == .legacy)
            #expect(try await client.call(.post, "/v1/auth/refresh", json: ["refresh_token": legacy], tenant: b).code == "refresh_token_invalid")
            let refreshed = try await client.call(.post, "/v1/auth/refresh", json: ["refresh_token": legacy], tenant: a)
            #expect(refreshed.status == .ok)
            let tokens = try refreshed.decode(API.TokenResponse.self)
            #expect(AccessTokenSigner.tenantID(of: tokens.accessToken) == idA)
            #expect(Tokens.tenantPart(of: tokens.refreshToken, prefix: "lr_rt_") == .tenant(idA))
            #expect(try await client.call(.get, "/v1/me", token: tokens.accessToken).status == .ok)
        }
    }

    @Test func aRefreshTokenInAnotherTenantIsInvalidThereAndUntouched() async throws {
        let a = try await TestEnvironment.makeTenant()
        let b = try await TestEnvironment.makeTenant()
        let idB = try await Self.tenantID(b)
        try await withApp { client in
            let account = try await client.signup("traveller", tenant: a)
            let forged = Self.forged(account.refreshToken, prefix: "lr_rt_", tenantID: idB)
            for (token, tenant) in [(account.refreshToken, b), (forged, b), (forged, a)] {
                let response = try await client.call(.post, "/v1/auth/refresh", json: ["refresh_token": token], tenant: tenant)
                #expect(response.status == .unauthorized)
                #expect(response.code == "refresh_token_invalid")
            }
            // None of that retired it.
            #expect(try await client.call(.post, "/v1/auth/refresh", json: ["refresh_token": account.refreshToken], tenant: a).status == .ok)
        }
    }

    @Test func aTicketWhoseTenantPartIsChangedIsUnknownAndSpendsNothing() async throws {
        let a = try await TestEnvironment.makeTenant()
        let b = try await TestEnvironment.makeTenant()
        let idB = try await Self.tenantID(b)
        try await withApp { client in
            let account = try await client.signup("ticket-forger", tenant: a)
            let ticket = try await client.call(.post, "/v1/events/tickets", token: account.accessToken).decode(API.StreamTicket.self).ticket
            let forged = Self.forged(ticket, prefix: "lr_st_", tenantID: idB)
            #expect(try await client.call(.get, "/v1/events?ticket=\(forged)").code == "unauthenticated")
            #expect(try await client.call(.get, "/v1/events?ticket=\(forged)", tenant: b).code == "unauthenticated")
            let waiting = try await TestEnvironment.ownerScalar(
                "SELECT count(*) FROM stream_tickets WHERE ticket_hash = \(PostgresBytes(Tokens.sha256(ticket)))", as: Int.self)
            #expect(waiting == 1)
        }
    }

    /// The lookup by tenant finds the token by the primary key, and row-level security
    /// admits it only with its own tenant set, whatever tenant the statement names.
    @Test func theLookupUsesThePrimaryKeyAndTheTenantSet() async throws {
        let a = try await TestEnvironment.makeTenant()
        let b = try await TestEnvironment.makeTenant()
        let (idA, idB) = (try await Self.tenantID(a), try await Self.tenantID(b))
        try await withApp { client in
            let hash = Tokens.sha256(try await client.signup("planned", tenant: a).accessToken)
            try await TestEnvironment.withAppPool { pool in
                let plan = try await pool.withTransaction(settings: [("app.tenant_id", String(idA))]) { connection in
                    let explain: PostgresQuery = "EXPLAIN (COSTS OFF) "
                    var statement = explain + AccessTokenStore.lookupStatement(tenantID: idA, hash: hash)
                    statement.prepared = false
                    // On Citus the worker's plan, over shards: read as on one server.
                    return PlanText.withoutShardSuffixes(
                        try await connection.query(statement).map { try $0.decode(String.self, column: 0) }.joined(separator: "\n"))
                }
                // Through an index, never a scan. Which index is the planner's call and moves with
                // a small database's statistics (a CI run's): the primary key with the tenant in its
                // Index Cond, the session index inside a loop over the tenant's sessions, or the
                // legacy hash index with the tenant as a Filter. Each names the tenant in the node
                // that reads session_tokens, which is the rule: the tenant is checked in the lookup.
                let lines = plan.split(separator: "\n").map(String.init)
                let tokens = lines.firstIndex { $0.contains("Index Scan") && $0.contains("on session_tokens tok") }
                let node = tokens.map { start in
                    lines[(start + 1)...].prefix { !$0.contains("->") }.joined(separator: "\n")
                } ?? ""
                #expect(tokens != nil, "\(plan)")
                #expect(node.contains("tenant_id = '\(idA)'::bigint)"), "\(plan)")
                #expect(!plan.contains("Seq Scan on session_tokens"), "\(plan)")
                let found = try await pool.withTenantReads(idA, logger: TestEnvironment.logger) {
                    try await AccessTokenStore().identity(tenantID: idA, accessTokenHash: hash, on: $0)
                }
                #expect(found?.username == "planned" && found?.tenantSlug == a)
                let hidden = try await pool.withTenantReads(idB, logger: TestEnvironment.logger) {
                    try await AccessTokenStore().identity(tenantID: idA, accessTokenHash: hash, on: $0)
                }
                #expect(hidden == nil)
            }
        }
    }

    static func tenantID(_ slug: String) async throws -> Int64 {
        try await TestEnvironment.ownerScalar("SELECT id FROM tenants WHERE slug = \(slug)", as: Int64.self)
    }

    /// `token` with its tenant part naming `tenantID` instead.
    static func forged(_ token: String, prefix: String, tenantID: Int64) -> String {
        "\(prefix)\(tenantID)_\(token.suffix(43))"
    }

    /// A token of the legacy form for the session of `account`'s access token, stored as the
    /// service stored tokens before they named their tenant.
    static func legacyToken(kind: String, sameSessionAs account: Account) async throws -> String {
        let token = Tokens.randomToken(prefix: kind == "access" ? "lr_at_" : "lr_rt_")
        try await TestEnvironment.withOwnerPool { pool in
            try await pool.query("""
                INSERT INTO session_tokens (tenant_id, token_hash, session_id, kind, expires_at)
                SELECT tenant_id, \(PostgresBytes(Tokens.sha256(token))), session_id, \(kind), now() + interval '1 hour'
                FROM session_tokens WHERE token_hash = \(PostgresBytes(Tokens.sha256(account.accessToken)))
                """)
        }
        return token
    }
}

/// The event streams of legacy tokens and tickets. A suite of its own whose name puts it
/// among the event-stream suites that `scripts/test.sh` runs apart: a stream cannot start
/// while another suite's big seed holds its transaction open.
@Suite(.timeLimit(.minutes(10))) struct TenantTokenEventsTests {
    @Test func theStreamsOfALegacyAccessTokenCheckItInItsTenant() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        let tenantID = try await TenantTokenTests.tenantID(tenant)
        try await withLiveApp({ $0.events.heartbeat = .seconds(1) }) { client, port in
            var account = try await client.signup("elder-stream", tenant: tenant)
            account.accessToken = try await TenantTokenTests.legacyToken(kind: "access", sameSessionAs: account)
            // One opened with it, and one through a ticket made with it (a ticket of the new form).
            let stream = try await account.stream(port: port)
            defer { stream.close() }
            let ticket = try await client.call(.post, "/v1/events/tickets", token: account.accessToken).decode(API.StreamTicket.self)
            #expect(Tokens.tenantPart(of: ticket.ticket, prefix: "lr_st_") == .tenant(tenantID))
            let byTicket = try await SSEClient.connect(port: port, path: "/v1/events?ticket=\(ticket.ticket)", headers: [:])
            defer { byTicket.close() }
            #expect(byTicket.status == 200)
            #expect(try await client.call(.post, "/v1/auth/logout", token: account.accessToken).status == .noContent)
            #expect(try await stream.waitForClose())
            #expect(try await byTicket.waitForClose())
        }
    }

    @Test func aLegacyTicketStillOpensTheStreamOnce() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        try await withLiveApp { client, port in
            let account = try await client.signup("elder-st", tenant: tenant)
            let legacy = Tokens.randomToken(prefix: "lr_st_")
            try await TestEnvironment.withOwnerPool { pool in
                try await pool.query("""
                    INSERT INTO stream_tickets (tenant_id, ticket_hash, access_token_hash, expires_at)
                    SELECT tenant_id, \(PostgresBytes(Tokens.sha256(legacy))), token_hash, now() + interval '30 seconds'
                    FROM session_tokens WHERE token_hash = \(PostgresBytes(Tokens.sha256(account.accessToken)))
                    """)
            }
            let stream = try await SSEClient.connect(port: port, path: "/v1/events?ticket=\(legacy)", headers: [:])
            #expect(stream.status == 200)
            stream.close()
            let again = try await SSEClient.connect(port: port, path: "/v1/events?ticket=\(legacy)", headers: [:])
            #expect(again.status == 401)
            again.close()
        }
    }
}
