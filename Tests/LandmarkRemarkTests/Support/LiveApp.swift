import Hummingbird
// Testable for `.live`'s own pieces (its application wrapper and the response's initialiser):
// the tests are built in debug, where every package is compiled for testing.
@testable import HummingbirdTesting
import ServiceLifecycle

/// Runs `base` on a real socket, as HummingbirdTesting's `.live` does, but with the tests'
/// patience. `.live` fails any request whose answer takes 20 s; with every suite running at
/// once on two shared cores a signup's scrypt can wait longer than that (a stream-ticket
/// test failed so in CI at s23's stop), and a test that fails when the machine is busy
/// rejects good work. Requests here wait as long as the streams' own waits (`SSEClient.patience`).
func runLive<Base: ApplicationProtocol>(
    _ base: Base,
    _ body: @Sendable (any TestClientProtocol, Int) async throws -> Void
) async throws {
    let app = TestApplication(base: base)
    let services = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: base.logger))
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await services.run() }
        let port = await app.portPromise.wait()
        let client = TestClient(host: "localhost", port: port, configuration: .init(timeout: SSEClient.patience))
        client.connect()
        do {
            try await body(LiveClient(client: client), port)
        } catch {
            try? await client.shutdown()
            await services.triggerGracefulShutdown()
            throw error
        }
        try await client.shutdown()
        await services.triggerGracefulShutdown()
        try await group.waitForAll()
    }
}

/// HummingbirdTesting's client on one keep-alive connection, as `.live` uses it.
private struct LiveClient: TestClientProtocol {
    let client: TestClient

    func executeRequest(uri: String, method: HTTPRequest.Method, headers: HTTPFields, body: ByteBuffer?) async throws -> TestResponse {
        var headers = headers
        headers[.connection] = "keep-alive"
        let request = TestClient.Request(uri, method: method, authority: "localhost", headers: headers, body: body)
        let response = try await client.execute(request)
        return TestResponse(head: response.head, body: response.body ?? ByteBuffer(), trailerHeaders: response.trailerHeaders)
    }

    var port: Int? { client.port }
}
