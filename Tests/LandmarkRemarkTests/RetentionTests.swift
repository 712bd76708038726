import Foundation
import HummingbirdTesting
@testable import LandmarkRemark
import Postgres
import TestPolling
import Testing

/// `purge_expired()` (migration 0010) through `RetentionService`, as the service's role:
/// what is past its horizon goes, what could still change an answer stays. Serialized, so
/// that no purge of this suite takes the row the timer test waits for the service to take.
@Suite(.serialized, .timeLimit(.minutes(10))) struct RetentionTests {
    /// Runs one purge as landmark_app, the way the service does.
    static func purge() async throws -> RetentionService.Purged {
        let pool = try PostgresPool(configuration: .init(conninfo: try TestEnvironment.variable("LR_TEST_DATABASE_URL"), maxConnections: 1))
        do {
            let purged = try await RetentionService(pool: pool, interval: .zero, logger: TestEnvironment.logger).purge()
            await pool.close()
            return purged
        } catch {
            await pool.close()
            throw error
        }
    }

    /// Rows of every purged kind, each marked by its tenant and an age either side of its horizon.
    static func arrange(tenant: String, userID: String) async throws {
        let tenantID = try await NotesFixture.tenantID(tenant)
        let user = try #require(Int64(userID))
        try await TestEnvironment.withOwnerPool { pool in
            let rows: [(String, StaticString, StaticString)] = [("expired-8d", "now() - interval '8 days'", "NULL"), ("revoked-8d", "now() + interval '1 day'", "now() - interval '8 days'"),
                                              ("expired-1d", "now() - interval '1 day'", "NULL"), ("revoked-1d", "now() + interval '1 day'", "now() - interval '1 day'")]
            for (label, expires, revoked) in rows {
                try await pool.query("""
                    WITH s AS (
                        INSERT INTO sessions (tenant_id, user_id, user_agent, expires_at, revoked_at)
                        VALUES (\(tenantID), \(user), \(label), \(unsafeSQL: expires), \(unsafeSQL: revoked)) RETURNING id
                    )
                    INSERT INTO session_tokens (tenant_id, token_hash, session_id, kind, expires_at)
                    SELECT \(tenantID), sha256(convert_to(\(label) || \(tenant), 'UTF8')), s.id, 'refresh', \(unsafeSQL: expires) FROM s
                    """)
            }
            // Tokens of a live session: one expired 8 days ago, one a day ago.
            try await pool.query("""
                WITH s AS (
                    INSERT INTO sessions (tenant_id, user_id, user_agent, expires_at) VALUES (\(tenantID), \(user), 'live', now() + interval '1 day') RETURNING id
                )
                INSERT INTO session_tokens (tenant_id, token_hash, session_id, kind, expires_at)
                SELECT \(tenantID), sha256(convert_to(v.label || \(tenant), 'UTF8')), s.id, 'access', v.expires
                FROM s, (VALUES ('token-8d', now() - interval '8 days'), ('token-1d', now() - interval '1 day')) AS v (label, expires)
                """)
            try await pool.query("""
                INSERT INTO login_failures (tenant_id, key, failures, first_failure_at, blocked_until) VALUES
                    (\(tenantID), 'addr:spent', 3, now() - interval '2 hours', now() - interval '1 hour'),
                    (\(tenantID), 'addr:blocked', 9, now() - interval '2 hours', now() + interval '5 minutes'),
                    (\(tenantID), 'addr:fresh', 1, now() - interval '5 minutes', NULL)
                """)
            try await pool.query("""
                INSERT INTO login_addresses (tenant_id, user_id, address, last_login_at) VALUES
                    (\(tenantID), \(user), 'old', now() - interval '31 days'), (\(tenantID), \(user), 'recent', now() - interval '29 days')
                """)
            try await pool.query("""
                INSERT INTO idempotency_keys (tenant_id, user_id, key, request_hash, created_at) VALUES
                    (\(tenantID), \(user), 'old', '\\x00', now() - interval '25 hours'), (\(tenantID), \(user), 'recent', '\\x00', now() - interval '23 hours')
                """)
            // Revocations (migration 0046), kept an access token's lifetime (an hour here) and an hour.
            try await pool.query("""
                INSERT INTO auth_revocations (tenant_id, epoch, user_id, created_at) VALUES
                    (\(tenantID), 1000001, \(user), now() - interval '2 hours 5 minutes'),
                    (\(tenantID), 1000002, \(user), now() - interval '1 hour 55 minutes')
                """)
            // Push matches (migration 0050): pending a day is old news; finished, kept 7 days;
            // pushes kept 30.
            try await pool.query("""
                WITH w AS (
                    INSERT INTO watches (tenant_id, user_id, center, radius_m, created_at, updated_at)
                    VALUES (\(tenantID), \(user), 'SRID=4326;POINT(151 -33)', 500, now(), now()) RETURNING id
                ), n AS (
                    INSERT INTO notes (tenant_id, user_id, body, location)
                    SELECT \(tenantID), \(user), v.body, 'SRID=4326;POINT(151 -33)'
                    FROM (VALUES ('pending-2d'), ('pending-recent'), ('sent-8d'), ('sent-6d')) v (body) RETURNING id, body
                )
                INSERT INTO push_matches (tenant_id, user_id, watch_id, note_id, author_id, created_at, state, finished_at)
                SELECT \(tenantID), \(user), w.id, n.id, \(user),
                       CASE n.body WHEN 'pending-2d' THEN now() - interval '2 days' WHEN 'sent-8d' THEN now() - interval '9 days'
                                   WHEN 'sent-6d' THEN now() - interval '7 days' ELSE now() END,
                       CASE WHEN n.body LIKE 'sent%' THEN 'sent' ELSE 'pending' END,
                       CASE n.body WHEN 'sent-8d' THEN now() - interval '8 days' WHEN 'sent-6d' THEN now() - interval '6 days' END
                FROM w, n
                """)
            // A note's watchers not expanded by a sender within a day (0052): old news, deleted.
            try await pool.query("""
                INSERT INTO push_notes (tenant_id, note_id, watchers, watches, created_at) VALUES
                    (\(tenantID), -2, '{}', '{}', now() - interval '25 hours'), (\(tenantID), -1, '{}', '{}', now() - interval '23 hours')
                """)
            try await pool.query("""
                INSERT INTO pushes (tenant_id, user_id, matches, delivered, sent_at) VALUES
                    (\(tenantID), \(user), 1, 1, now() - interval '31 days'), (\(tenantID), \(user), 1, 1, now() - interval '29 days')
                """)
        }
    }

    /// What of the arranged rows is left, as sorted labels.
    static func remaining(tenant: String) async throws -> [String] {
        let tenantID = try await NotesFixture.tenantID(tenant)
        return try await TestEnvironment.withOwnerPool { pool in
            try await pool.query("""
                SELECT label FROM (
                    SELECT 'session ' || user_agent AS label FROM sessions WHERE tenant_id = \(tenantID) AND user_agent <> 'live'
                    UNION ALL SELECT 'token ' || CASE WHEN t.expires_at < now() - interval '2 days' THEN '8d' ELSE '1d' END
                    FROM session_tokens t JOIN sessions s ON s.tenant_id = t.tenant_id AND s.id = t.session_id
                    WHERE t.tenant_id = \(tenantID) AND s.user_agent = 'live'
                    UNION ALL SELECT 'failures ' || key FROM login_failures WHERE tenant_id = \(tenantID)
                    UNION ALL SELECT 'address ' || address FROM login_addresses WHERE tenant_id = \(tenantID)
                    UNION ALL SELECT 'idempotency ' || key FROM idempotency_keys WHERE tenant_id = \(tenantID)
                    UNION ALL SELECT 'revocation ' || CASE epoch WHEN 1000001 THEN 'old' ELSE 'recent' END
                    FROM auth_revocations WHERE tenant_id = \(tenantID) AND epoch > 1000000
                    UNION ALL SELECT 'match ' || n.body || ' ' || m.state
                    FROM push_matches m JOIN notes n ON n.tenant_id = m.tenant_id AND n.id = m.note_id WHERE m.tenant_id = \(tenantID)
                    UNION ALL SELECT 'notes ' || CASE note_id WHEN -2 THEN 'old' ELSE 'recent' END FROM push_notes WHERE tenant_id = \(tenantID)
                    UNION ALL SELECT 'push ' || CASE WHEN sent_at < now() - interval '30 days' THEN 'old' ELSE 'recent' END
                    FROM pushes WHERE tenant_id = \(tenantID)
                ) rows ORDER BY label
                """).map { try $0.decode(String.self, column: 0) }
        }
    }

    @Test func rowsPastTheirHorizonGoAndFreshOnesStay() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        let user = try await TestEnvironment.withOwnerPool { pool in
            try await pool.query("""
                INSERT INTO users (tenant_id, username, password_hash) SELECT id, 'retained', 'not a hash' FROM tenants WHERE slug = \(tenant)
                RETURNING id
                """)[0].decode(Int64.self, column: 0)
        }
        try await Self.arrange(tenant: tenant, userID: String(user))
        // (Counts are not checked: a purge running beside this test may take some of these rows.)
        _ = try await Self.purge()
        let left = try await Self.remaining(tenant: tenant)
        #expect(left == [
            "address recent", "failures addr:blocked", "failures addr:fresh", "idempotency recent",
            "match pending-2d dropped", "match pending-recent pending", "match sent-6d sent", "notes recent", "push recent", "revocation recent",
            "session expired-1d", "session revoked-1d", "token 1d",
        ], "\(left)")
        // Operators' version, as the owner: nothing of this tenant is left to purge.
        let counts = try await TestEnvironment.withOwnerPool { try await $0.query("SELECT * FROM admin.purge_expired()")[0] }
        #expect(counts.columns.map(\.name) == [
            "sessions", "session_tokens", "login_failures", "login_addresses", "idempotency_keys", "id_token_uses",
            "guest_signups", "stream_tickets", "events",
        ])
        #expect(try await Self.remaining(tenant: tenant).count == 13)
    }

    @Test func aRefreshWithinGraceStillWorksAfterAPurgeAndReuseIsStillCaught() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        // The grace's length is not what is pinned here (AuthSessionTests pins it): with both
        // cores busy the purge and the calls before the retry took longer than the default 10 s.
        try await withApp({ $0.accounts.refreshGraceSeconds = 120 }) { client in
            let account = try await client.signup("rotating", tenant: tenant)
            let first = try await client.call(.post, "/v1/auth/refresh", json: ["refresh_token": account.refreshToken], tenant: tenant)
            #expect(first.status == .ok)
            _ = try await Self.purge()
            // The retired token, again within the grace window: a fresh pair.
            let retry = try await client.call(.post, "/v1/auth/refresh", json: ["refresh_token": account.refreshToken], tenant: tenant)
            #expect(retry.status == .ok, "\(retry.body)")
            // Past the grace window it is reuse, and the purge kept what tells so.
            try await TestEnvironment.withOwnerPool { pool in
                try await pool.query("""
                    UPDATE session_tokens SET retired_at = now() - interval '3 minutes'
                    WHERE token_hash = sha256(convert_to(\(account.refreshToken), 'UTF8'))
                    """)
            }
            _ = try await Self.purge()
            let reuse = try await client.call(.post, "/v1/auth/refresh", json: ["refresh_token": account.refreshToken], tenant: tenant)
            #expect(reuse.code == "refresh_token_reused")
        }
    }

    @Test func theNewSettingsAreReadAndChecked() throws {
        let set = try AppConfiguration(environment: ["LR_RETENTION_INTERVAL_SECONDS": "0", "LR_LOGIN_FAILURES_PER_ACCOUNT": "7"])
        #expect(set.operations.retentionInterval == .zero && set.accounts.loginFailuresPerAccount == 7)
        #expect(AppConfiguration().operations.retentionInterval == .seconds(3600) && AppConfiguration().accounts.loginFailuresPerAccount == 100)
        for (name, value) in [("LR_RETENTION_INTERVAL_SECONDS", "-1"), ("LR_RETENTION_INTERVAL_SECONDS", "86401"),
                              ("LR_LOGIN_FAILURES_PER_ACCOUNT", "0"), ("LR_LOGIN_FAILURES_PER_ACCOUNT", "many")] {
            #expect(throws: ConfigurationError.self, "\(name)=\(value)") { try AppConfiguration(environment: [name: value]) }
        }
    }

    @Test func theServicePurgesOnItsTimer() async throws {
        let tenant = try await TestEnvironment.makeTenant()
        let tenantID = try await NotesFixture.tenantID(tenant)
        try await TestEnvironment.withOwnerPool { pool in
            try await pool.query("""
                INSERT INTO login_failures (tenant_id, key, failures, first_failure_at) VALUES (\(tenantID), 'addr:timer', 1, now() - interval '2 hours')
                """)
        }
        try await withLiveApp({ $0.operations.retentionInterval = .seconds(1) }) { _, _ in
            // Polls a real condition (the rows left).
            let gone = try await eventually(every: .milliseconds(100)) {
                try await TestEnvironment.ownerScalar("SELECT count(*)::int8 FROM login_failures WHERE tenant_id = \(tenantID)", as: Int.self) == 0
            }
            #expect(gone)
        }
    }
}
