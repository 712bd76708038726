import Foundation
import HTTPTypes
import HummingbirdTesting
import LandmarkRemark
import TestPolling
import Testing

/// No request holds the database for long: what could never finish in time is refused up
/// front (`422 query_too_broad`), every statement has a timeout, and a request past its
/// deadline, or whose client went away, has its statement cancelled on the server.
@Suite(.timeLimit(.minutes(10))) struct BoundedWorkTests {
    static let statementTimeout = Duration.milliseconds(300)

    static func short(_ configuration: inout AppConfiguration) {
        configuration.database.statementTimeout = statementTimeout
        configuration.server.requestTimeout = .seconds(30)
    }

    static func timed(_ work: () async throws -> APIResponse) async throws -> (APIResponse, Duration) {
        let started = ContinuousClock.now
        let response = try await work()
        return (response, ContinuousClock.now - started)
    }

    /// The statements the service ran for the request `id`, by call site (its trace log).
    static func statementSites(_ logs: CapturedLogs, request id: String) -> [String] {
        logs.all.filter { $0.message == "statement" && $0.metadata["request_id"].map { "\($0)" } == id }
            .map { "\($0.metadata["site"] ?? "")" }
    }

    /// A call site (`#fileID:line`) in the notes' stores: `LandmarkRemark/NoteStore+List.swift:40`.
    static func isNotesStatement(_ site: String) -> Bool { site.hasPrefix("LandmarkRemark/Note") }

    /// World clusters at a high zoom and searches no index can serve: 422 at once, before
    /// any statement on the notes ran. (They took seconds before: the statement ran into its
    /// timeout.) "At once" is read from the statements the service logged for the request,
    /// not from a clock, which a loaded machine stretched past the 300 ms it was held to.
    @Test func requestsThatCannotFinishInTimeAre422AtOnce() async throws {
        let world = try await LargeTenant.world.value
        let logs = CapturedLogs()
        try await TestEnvironment.migrate()
        let app = try await buildApplication(configuration: try TestEnvironment.configuration(Self.short), logger: logs.logger(level: .trace))
        try await app.test(.router) { client in
            for (index, path) in [
                "/v1/notes/clusters?bbox=-180,-85,180,85&zoom=7", "/v1/notes/clusters?bbox=-180,-90,180,90&zoom=12",
                "/v1/notes?q=\(queryValue(String(repeating: "%", count: 100)))", "/v1/notes?q=~~", "/v1/notes?q=q&in=body",
                "/v1/notes/clusters?bbox=-180,-85,180,85&zoom=2&q=%C3%A9", "/v1/notes?q=%25%25%25%25&author=others",
            ].enumerated() {
                let id = "too-broad-\(index)"
                let response = try await client.call(
                    .get, path, token: world.author.accessToken, headers: [HTTPField.Name("X-Request-Id")!: id])
                #expect(response.status == .unprocessableContent, "\(path): \(response.body)")
                #expect(response.code == "query_too_broad", "\(path)")
                // The token's lookup may run; no statement of the notes (NoteStore…) does.
                let sites = Self.statementSites(logs, request: id)
                #expect(!sites.contains(where: Self.isNotesStatement), "\(path) ran \(sites)")
            }
            // The same log shows a statement of the notes for a request that does run one.
            let names = try await client.call(
                .get, "/v1/notes?q=q&in=username", token: world.author.accessToken, headers: [HTTPField.Name("X-Request-Id")!: "names"])
            #expect(names.status == .ok, "usernames are few: any q is cheap there")
            #expect(Self.statementSites(logs, request: "names").contains(where: Self.isNotesStatement), "the log names the notes' statements")
        }
    }

    /// The heaviest requests still allowed end within the statement timeout: answered, or
    /// cancelled by the server and answered `503` with `Retry-After`; never `500`. What ended
    /// a `503` is read from the log (the server's `57014` on one of the request's statements),
    /// not from a clock: a loaded machine stretches the request's time, not its cause. A `200`
    /// ran within the timeout by definition: the server ends any statement that runs longer.
    @Test func heaviestAllowedRequestsEndWithinTheStatementTimeout() async throws {
        let world = try await LargeTenant.world.value
        let logs = CapturedLogs()
        try await TestEnvironment.migrate()
        let app = try await buildApplication(configuration: try TestEnvironment.configuration(Self.short), logger: logs.logger(level: .trace))
        try await app.test(.router) { client in
            for (index, path) in [
                "/v1/notes/clusters?bbox=-180,-85,180,85&zoom=4", "/v1/notes/clusters?bbox=-180,-85,180,85&zoom=4&q=not",
                "/v1/notes?q=not&in=body&bbox=-180,-85,180,85", "/v1/notes?q=not&near=0,0&limit=100",
                // Two letters, rare and common, over the whole tenant: the bigram index's.
                "/v1/notes?q=qj&in=body", "/v1/notes?q=no&in=body", "/v1/notes?q=qj&near=0,0",
            ].enumerated() {
                let id = "heaviest-\(index)"
                let response = try await client.call(
                    .get, path, token: world.author.accessToken, headers: [HTTPField.Name("X-Request-Id")!: id])
                #expect(response.status == .ok || response.status == .serviceUnavailable, "\(path): \(response.body)")
                if response.status == .serviceUnavailable {
                    #expect(response.code == "unavailable" && response.headers[.retryAfter] != nil)
                    #expect(Self.cancelledByTheServer(logs, request: id), "\(path): 503 without the server's statement timeout")
                }
            }
        }
    }

    /// True when one of the request `id`'s statements failed with the server's `57014` (its
    /// statement timeout or a cancel request), as the Postgres layer logs it.
    static func cancelledByTheServer(_ logs: CapturedLogs, request id: String) -> Bool {
        logs.all.contains {
            $0.message == "statement failed" && $0.metadata["request_id"].map { "\($0)" } == id
                && $0.metadata["error"].map { "\($0)" }?.contains("SQLSTATE 57014") == true
        }
    }

    /// A request past its deadline, its statement waiting inside the server (for a row lock):
    /// `503` soon after the deadline, its backend no longer waiting within a second, the
    /// pool's connection back, and the next request served.
    @Test func aStatementPastItsDeadlineIsCancelledOnTheServer() async throws {
        let world = try await LargeTenant.world.value
        try await withApp({ $0.server.requestTimeout = .milliseconds(300) }) { client in
            try await LargeTenant.withNoteLocked(world.noteID, tenant: world.tenant) { owner in
                let (response, elapsed) = try await Self.timed {
                    try await client.call(.patch, "/v1/notes/\(world.noteID)", json: ["body": "late"], token: world.author.accessToken)
                }
                // Answered while the lock is still held (the statement would wait for it as long
                // as it lasts): the deadline, not the lock's end, ended the request.
                #expect(response.status == .serviceUnavailable)
                #expect(response.code == "unavailable" && response.headers[.retryAfter] != nil)
                #expect(elapsed >= .milliseconds(300), "took \(elapsed)")
                // The lock is still held: a backend that stops waiting was cancelled. Polled with
                // a deadline that only a failing test waits out.
                #expect(try await eventually(within: .seconds(60)) { try await LargeTenant.waitingBehind(owner) == 0 })
                // Polled: the event hub's horizon poll borrows a connection for a moment too.
                #expect(try await eventually(within: .seconds(60)) { try await client.connectionsInUse() == 0 })
                let again = try await client.call(.get, "/v1/notes/\(world.noteID)", token: world.author.accessToken)
                #expect(again.status == .ok)
            }
        }
    }

    /// A client that sends a request and hangs up at once: its statement, waiting inside the
    /// server, is cancelled there, and its connection goes back to the pool.
    @Test func aClientThatHangsUpHasItsStatementCancelled() async throws {
        let world = try await LargeTenant.world.value
        try await withLiveApp({ $0.server.requestTimeout = .seconds(60) }) { client, port in
            try await LargeTenant.withNoteLocked(world.otherNoteID, tenant: world.tenant) { owner in
                let body = #"{"body":"gone"}"#
                let socket = try RawHTTPClient(port: port, request: """
                    PATCH /v1/notes/\(world.otherNoteID) HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \(world.author.accessToken)\r\n\
                    Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)
                    """)
                #expect(try await eventually(within: .seconds(60)) { try await LargeTenant.waitingBehind(owner) == 1 })
                // The waiting request's connection (and, for a moment now and then, the event hub's poll).
                #expect((try await client.connectionsInUse() ?? 0) >= 1)
                socket.hangUp()
                // The lock is still held, so the statement would wait as long as it lasts: one
                // that stops waiting was cancelled (the deadlines only bound a failing test).
                #expect(try await eventually(within: .seconds(60)) { try await LargeTenant.waitingBehind(owner) == 0 })
                #expect(try await eventually(within: .seconds(60)) { try await client.connectionsInUse() == 0 })
            }
        }
    }
}
