import Foundation
import HTTPTypes
import HummingbirdTesting
import LandmarkRemark
import Testing

/// No request holds the database for long: what could never finish in time is refused up
/// front (`422 query_too_broad`), every statement has a timeout, and a request past its
/// deadline, or whose client went away, has its statement cancelled on the server.
@Suite(.timeLimit(.minutes(2))) struct BoundedWorkTests {
    static let statementTimeout = Duration.milliseconds(300)

    static func short(_ configuration: inout AppConfiguration) {
        configuration.statementTimeout = statementTimeout
        configuration.requestTimeout = .seconds(30)
    }

    static func timed(_ work: () async throws -> APIResponse) async throws -> (APIResponse, Duration) {
        let started = ContinuousClock.now
        let response = try await work()
        return (response, ContinuousClock.now - started)
    }

    /// World clusters at a high zoom and searches no trigram can serve: 422 at once, well
    /// before a statement could have run into its timeout. (They took seconds before.)
    @Test func requestsThatCannotFinishInTimeAre422AtOnce() async throws {
        let world = try await LargeTenant.world.value
        try await withApp(Self.short) { client in
            for path in [
                "/v1/notes/clusters?bbox=-180,-85,180,85&zoom=7", "/v1/notes/clusters?bbox=-180,-90,180,90&zoom=12",
                "/v1/notes?q=\(queryValue(String(repeating: "%", count: 100)))", "/v1/notes?q=~~", "/v1/notes?q=qj&in=body",
                "/v1/notes/clusters?bbox=-180,-85,180,85&zoom=2&q=qj", "/v1/users/author/notes?q=%25%25%25%25",
            ] {
                let (response, elapsed) = try await Self.timed { try await client.call(.get, path, token: world.author.accessToken) }
                #expect(response.status == .unprocessableContent, "\(path): \(response.body)")
                #expect(response.code == "query_too_broad", "\(path)")
                #expect(elapsed < Self.statementTimeout, "\(path) took \(elapsed)")
            }
            let names = try await client.call(.get, "/v1/notes?q=qj&in=username", token: world.author.accessToken)
            #expect(names.status == .ok, "usernames are few: any q is cheap there")
        }
    }

    /// The heaviest requests still allowed end within the statement timeout: answered, or
    /// cancelled by the server and answered `503` with `Retry-After`; never `500`.
    @Test func heaviestAllowedRequestsEndWithinTheStatementTimeout() async throws {
        let world = try await LargeTenant.world.value
        try await withApp(Self.short) { client in
            for path in [
                "/v1/notes/clusters?bbox=-180,-85,180,85&zoom=4", "/v1/notes/clusters?bbox=-180,-85,180,85&zoom=4&q=not",
                "/v1/notes?q=not&in=body&bbox=-180,-85,180,85", "/v1/notes?q=not&near=0,0&limit=100",
            ] {
                let (response, elapsed) = try await Self.timed { try await client.call(.get, path, token: world.author.accessToken) }
                #expect(response.status == .ok || response.status == .serviceUnavailable, "\(path): \(response.body)")
                if response.status == .serviceUnavailable {
                    #expect(response.code == "unavailable" && response.headers[.retryAfter] != nil)
                }
                #expect(elapsed < Self.statementTimeout + .milliseconds(400), "\(path) took \(elapsed)")
            }
        }
    }

    /// A request past its deadline, its statement waiting inside the server (for a row lock):
    /// `503` soon after the deadline, its backend no longer waiting within a second, the
    /// pool's connection back, and the next request served.
    @Test func aStatementPastItsDeadlineIsCancelledOnTheServer() async throws {
        let world = try await LargeTenant.world.value
        try await withApp({ $0.requestTimeout = .milliseconds(300) }) { client in
            try await LargeTenant.withNoteLocked(world.noteID, tenant: world.tenant) { owner in
                let (response, elapsed) = try await Self.timed {
                    try await client.call(.patch, "/v1/notes/\(world.noteID)", json: ["body": "late"], token: world.author.accessToken)
                }
                #expect(response.status == .serviceUnavailable)
                #expect(response.code == "unavailable" && response.headers[.retryAfter] != nil)
                #expect(elapsed >= .milliseconds(300) && elapsed < .seconds(2), "took \(elapsed)")
                #expect(try await LargeTenant.within(.seconds(1)) { try await LargeTenant.waitingBehind(owner) == 0 })
                // Within a second: the event hub's horizon poll borrows a connection for a moment too.
                #expect(try await LargeTenant.within(.seconds(1)) { try await client.connectionsInUse() == 0 })
                let again = try await client.call(.get, "/v1/notes/\(world.noteID)", token: world.author.accessToken)
                #expect(again.status == .ok)
            }
        }
    }

    /// A client that sends a request and hangs up at once: its statement, waiting inside the
    /// server, is cancelled there, and its connection goes back to the pool.
    @Test func aClientThatHangsUpHasItsStatementCancelled() async throws {
        let world = try await LargeTenant.world.value
        try await withLiveApp({ $0.requestTimeout = .seconds(60) }) { client, port in
            try await LargeTenant.withNoteLocked(world.otherNoteID, tenant: world.tenant) { owner in
                let body = #"{"body":"gone"}"#
                let socket = try RawHTTPClient(port: port, request: """
                    PATCH /v1/notes/\(world.otherNoteID) HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \(world.author.accessToken)\r\n\
                    Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)
                    """)
                #expect(try await LargeTenant.within(.seconds(10)) { try await LargeTenant.waitingBehind(owner) == 1 })
                // The waiting request's connection (and, for a moment now and then, the event hub's poll).
                #expect((try await client.connectionsInUse() ?? 0) >= 1)
                socket.hangUp()
                #expect(try await LargeTenant.within(.seconds(1)) { try await LargeTenant.waitingBehind(owner) == 0 })
                #expect(try await LargeTenant.within(.seconds(1)) { try await client.connectionsInUse() == 0 })
            }
        }
    }
}
