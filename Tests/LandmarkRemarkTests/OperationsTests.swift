import Foundation
import HTTPTypes
import HummingbirdTesting
import LandmarkRemark
import Testing

@Suite(.timeLimit(.minutes(10))) struct OperationsTests {
    @Test func healthAndReadiness() async throws {
        try await withApp { client in
            let health = try await client.call(.get, "/healthz")
            #expect(health.status == .ok)
            #expect(health.headers[.contentType] == "text/plain; charset=utf-8")
            let ready = try await client.call(.get, "/readyz")
            #expect(ready.status == .ok)
            #expect(ready.headers[HTTPField.Name("X-Request-Id")!]?.isEmpty == false)
        }
    }

    @Test func readinessIsUnavailableWhileMigrationsArePending() async throws {
        // A build that knows one more migration than the database has applied.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("migrations-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let real = TestEnvironment.repositoryRoot.appendingPathComponent("sql/migrations")
        for name in try FileManager.default.contentsOfDirectory(atPath: real.path) {
            try FileManager.default.copyItem(at: real.appendingPathComponent(name), to: directory.appendingPathComponent(name))
        }
        try "SELECT 1;".write(to: directory.appendingPathComponent("9999_future.sql"), atomically: true, encoding: .utf8)
        try await withApp({ $0.database.migrationsDirectory = directory.path }) { client in
            let ready = try await client.call(.get, "/readyz")
            #expect(ready.status == .serviceUnavailable)
            #expect(ready.code == "unavailable")
            #expect(ready.headers[.retryAfter] != nil)
        }
    }

    @Test func requestIDIsEchoedWhenSaneAndReplacedOtherwise() async throws {
        try await withApp { client in
            let name = HTTPField.Name("X-Request-Id")!
            let kept = try await client.call(.get, "/healthz", headers: [name: "client-id-123"])
            #expect(kept.headers[name] == "client-id-123")
            let replaced = try await client.call(.get, "/healthz", headers: [name: String(repeating: "x", count: 129)])
            #expect(replaced.headers[name]?.count == 32)
        }
    }

    @Test func unknownRoutesAreProblemDetails() async throws {
        try await withApp { client in
            let response = try await client.call(.get, "/v1/nothing-here")
            #expect(response.status == .notFound)
            #expect(response.headers[.contentType] == "application/problem+json")
            #expect(response.code == "not_found")
            // A well-formed problem whose request_id is the response's X-Request-Id.
            let problem = try response.problem()
            #expect(!problem.requestID.isEmpty)
            #expect(response.headers[HTTPField.Name("X-Request-Id")!] == problem.requestID)
        }
    }

    @Test func metricsAreServedInPrometheusText() async throws {
        try await withApp { client in
            let response = try await client.call(.get, "/metrics")
            #expect(response.status == .ok)
            #expect(response.body.contains("lr_db_pool_open"))
            #expect(response.body.contains("lr_event_streams_open"))
            #expect(response.body.contains("lr_password_hashing_waiting"))
        }
    }

    @Test func badSettingsNameTheVariable() {
        #expect(throws: ConfigurationError.self) { try AppConfiguration(environment: ["LR_PORT": "eighty"]) }
        do {
            _ = try AppConfiguration(environment: ["LR_DB_POOL_SIZE": "0"])
            Issue.record("a pool of 0 was accepted")
        } catch let error as ConfigurationError {
            #expect(error.variable == "LR_DB_POOL_SIZE")
        } catch {
            Issue.record("unexpected \(error)")
        }
        #expect(throws: ConfigurationError.self) { try AppConfiguration(environment: ["LR_TRUSTED_PROXIES": "not-an-ip"]) }
        #expect(throws: ConfigurationError.self) { try AppConfiguration(environment: ["LR_LOG_LEVEL": "loud"]) }
        let good = try? AppConfiguration(environment: ["LR_PORT": "9000", "LR_TRUSTED_PROXIES": "127.0.0.2, 10.0.0.0/8, ::1"])
        #expect(good?.server.port == 9000)
        #expect(good?.server.trustedProxies.contains("10.1.2.3") == true)
        #expect(good?.server.trustedProxies.contains("127.0.0.1") == false)
    }
}
