import Foundation
import HTTPTypes
import LandmarkRemark
import LandmarkRemarkClient
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime
import Postgres
import Testing

/// The Swift client (clients/LandmarkRemarkClient) against the real service on a real socket.
enum ClientTest {
    /// By default its requests may take 120 s, not the client's own 30: with both cores busy
    /// (stress-ng beside the suite, and CI's shared cores) twenty concurrent calls and their
    /// refresh ran past 30 s. Only a failing test waits that long.
    static func client(port: Int, tenant: String, transport: (any ClientTransport)? = nil) -> LandmarkRemark {
        LandmarkRemark(
            baseURL: URL(string: "http://127.0.0.1:\(port)")!, tenant: tenant,
            transport: transport ?? AsyncHTTPClientTransport(configuration: .init(timeout: .seconds(120))))
    }

    /// Makes every access token of `username` expire now, behind the client's back: the
    /// client still thinks its token good for an hour, and the service answers `401`.
    static func expireAccessTokens(of username: String, tenant: String) async throws {
        try await TestEnvironment.withOwnerPool { pool in
            try await pool.query("""
                UPDATE session_tokens tok SET expires_at = now() - interval '1 second'
                FROM sessions s, users u, tenants t
                WHERE tok.kind = 'access' AND s.tenant_id = tok.tenant_id AND s.id = tok.session_id
                  AND u.tenant_id = s.tenant_id AND u.id = s.user_id AND t.id = u.tenant_id
                  AND t.slug = \(tenant) AND u.username = \(username)
                """)
        }
    }

    /// Refresh tokens issued to the user: one at sign-in, one more per refresh.
    static func refreshTokenCount(of username: String, tenant: String) async throws -> Int {
        try await TestEnvironment.ownerScalar("""
            SELECT count(*)::bigint FROM session_tokens tok
            JOIN sessions s ON s.tenant_id = tok.tenant_id AND s.id = tok.session_id
            JOIN users u ON u.tenant_id = s.tenant_id AND u.id = s.user_id
            JOIN tenants t ON t.id = u.tenant_id
            WHERE tok.kind = 'refresh' AND t.slug = \(tenant) AND u.username = \(username)
            """, as: Int.self)
    }

    /// The newest event id of `tenant`: a stream told to resume there sees everything after it,
    /// however long its first connection takes. The tenant's own: on Citus each worker's events
    /// count in a range of their own, and an id of another range is no position in this stream.
    static func currentEventID(tenant: String) async throws -> String {
        String(try await TestEnvironment.ownerScalar("""
            SELECT coalesce(max(e.id), 0)::bigint FROM events e JOIN tenants t ON t.id = e.tenant_id
            WHERE t.slug = \(tenant)
            """, as: Int64.self))
    }

    static func noteCount(of username: String, tenant: String) async throws -> Int {
        try await TestEnvironment.ownerScalar("""
            SELECT count(*)::bigint FROM notes n JOIN users u ON u.tenant_id = n.tenant_id AND u.id = n.user_id
            JOIN tenants t ON t.id = u.tenant_id WHERE t.slug = \(tenant) AND u.username = \(username)
            """, as: Int.self)
    }
}

/// A transport that holds back the answer to one operation until the test lets it through:
/// a refresh that is under way, provably, while the test signs out.
final class HeldTransport: ClientTransport {
    let inner = AsyncHTTPClientTransport()
    let operation: String
    let gate = Gate()

    init(holding operation: String) {
        self.operation = operation
    }

    func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
        let answer = try await inner.send(request, body: body, baseURL: baseURL, operationID: operationID)
        if operationID == operation { await gate.arriveAndWait() }
        return answer
    }

    /// Where a held answer waits; the test waits for it to arrive, then opens it.
    actor Gate {
        private var arrivals: [CheckedContinuation<Void, Never>] = []
        private var arrived = false
        private var waiters: [CheckedContinuation<Void, Never>] = []
        private var opened = false

        func arriveAndWait() async {
            arrived = true
            for waiter in waiters { waiter.resume() }
            waiters = []
            if opened { return }
            await withCheckedContinuation { arrivals.append($0) }
        }

        /// Returns once an answer is held.
        func waitForArrival() async {
            if arrived { return }
            await withCheckedContinuation { waiters.append($0) }
        }

        func open() {
            opened = true
            for arrival in arrivals { arrival.resume() }
            arrivals = []
        }
    }
}
