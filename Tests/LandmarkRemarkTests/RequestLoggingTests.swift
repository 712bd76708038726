import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Postgres
import Testing

@testable import LandmarkRemark

/// The database layer logs with the caller's logger, so its lines carry the request id.
@Suite struct RequestLoggingTests {
    @Test func databaseLogLinesCarryTheRequestID() async throws {
        let logs = CapturedLogs()
        try await TestEnvironment.migrate()
        let app = try await buildApplication(configuration: try TestEnvironment.configuration(), logger: logs.logger(level: .trace))
        let tenant = try await TestEnvironment.makeTenant()
        try await app.test(.router) { client in
            let response = try await client.execute(
                uri: "/v1/auth/login", method: .post,
                headers: [.contentType: "application/json", HTTPField.Name("X-Tenant")!: tenant, HTTPField.Name("X-Request-Id")!: "trace-me-42"],
                body: ByteBuffer(string: #"{"username": "nobody_here", "password": "not the password"}"#))
            #expect(response.status == .unauthorized)
        }
        let mine = logs.all.filter { $0.metadata["request_id"] == "trace-me-42" }
        // The tenant lookup, then the throttle's reservation, which counts the failure too.
        let statements = mine.filter { $0.message == "statement" }
        #expect(statements.count >= 2, "\(mine.map(\.message))")
        #expect(statements.allSatisfy { "\($0.metadata["site"] ?? "")".hasPrefix("LandmarkRemark/") })
        #expect(mine.contains { $0.message == "request" && $0.metadata["status"].map { "\($0)" } == "401" })
    }

    @Test func aFailedStatementIsLoggedOnTheCallersLoggerWithItsCallSite() async throws {
        let logs = CapturedLogs()
        var logger = logs.logger(level: .debug)
        logger[metadataKey: "request_id"] = "failing-7"
        let pool = try PostgresPool(configuration: .init(conninfo: try TestEnvironment.variable("LR_TEST_DATABASE_URL"), maxConnections: 1))
        let line = #line + 1
        await #expect(throws: PostgresError.self) { try await pool.query("SELECT 1 / \(0)", logger: logger) }
        await pool.close()
        let failure = try #require(logs.all.first { $0.message == "statement failed" })
        #expect(failure.metadata["request_id"] == "failing-7")
        let error = "\(failure.metadata["error"] ?? "")"
        #expect(error.contains("22012") && error.contains("RequestLoggingTests.swift:\(line)"), "\(error)")
    }
}
