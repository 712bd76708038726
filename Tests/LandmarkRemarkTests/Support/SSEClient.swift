import Foundation
import Synchronization
import TestPolling

#if canImport(Glibc)
import Glibc
#endif

/// A minimal Server-Sent Events client over a plain socket, for tests against
/// a live server: it reads on a thread of its own, undoes chunked encoding,
/// and collects events (comments are counted, not returned).
final class SSEClient: Sendable {
    struct Event: Sendable, Equatable {
        let id: String?
        let event: String?
        let data: String
    }

    private struct State {
        var status: Int?
        var events: [Event] = []
        var comments = 0
        /// The client's Last-Event-ID as a browser keeps it: set by every `id:` field,
        /// also in a message without data (a heartbeat that carries the position).
        var lastEventID: String?
        var closed = false
        var paused = false
    }

    private let socket: Int32
    private let state = Mutex(State())

    /// Connects and sends `GET path`; returns once the status line has arrived.
    /// `receiveBuffer` shrinks the socket's receive buffer, for a client that stops reading.
    static func connect(port: Int, path: String, headers: [String: String], receiveBuffer: Int32? = nil) async throws -> SSEClient {
        let descriptor = try connectLoopback(port: port) { descriptor in
            if var size = receiveBuffer {
                setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            }
        }
        var request = "GET \(path) HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        request += "\r\n"
        _ = request.withCString { send(descriptor, $0, strlen($0), 0) }
        let client = SSEClient(socket: descriptor)
        Thread.detachNewThread { client.readLoop() }
        // The status line comes once the tenant's head is known (up to the tests' 90 s
        // `events.readyTimeout`, then 503): waited for longer than that.
        _ = try await eventually(within: patience) { client.status != nil || client.isClosed }
        return client
    }

    private init(socket: Int32) { self.socket = socket }

    var status: Int? { state.withLock { $0.status } }
    var isClosed: Bool { state.withLock { $0.closed } }
    var comments: Int { state.withLock { $0.comments } }
    var lastEventID: String? { state.withLock { $0.lastEventID } }

    /// How long the waits below wait unless told: they end as soon as what they wait for
    /// arrives, so only a failing test waits this out, and a loaded machine never does.
    static let patience = Duration.seconds(120)

    /// Waits until `condition` holds for the client's state or the timeout passes; whether it held.
    func wait(timeout: Duration = patience, until condition: @Sendable (SSEClient) -> Bool) async throws -> Bool {
        try await eventually(within: timeout) { condition(self) }
    }

    /// Waits until `count` events have arrived (or the timeout passes) and returns all so far.
    func events(count: Int, timeout: Duration = patience) async throws -> [Event] {
        _ = try await eventually(within: timeout) { state.withLock { $0.events.count >= count || $0.closed } }
        return received
    }

    /// Waits for the first event of `kind` whose data's `id` is `id` (or the timeout, or the
    /// end of the stream), and returns it.
    func firstEvent(_ kind: String, id: String, timeout: Duration = patience) async throws -> Event? {
        func match() -> Event? {
            received.first { $0.event == kind && (try? JSONTree(parsing: $0.data))?["id"] == .string(id) }
        }
        _ = try await eventually(within: timeout) { match() != nil || isClosed }
        return match()
    }

    /// The events that have arrived so far, without waiting.
    var received: [Event] { state.withLock { $0.events } }

    /// Waits for the server to close the stream.
    func waitForClose(timeout: Duration = patience) async throws -> Bool {
        try await eventually(within: timeout) { isClosed }
    }

    /// Stops reading from the socket (the server's writes back up) until `resume()`.
    func pause() { state.withLock { $0.paused = true } }
    func resume() { state.withLock { $0.paused = false } }

    func close() {
        shutdown(socket, Int32(SHUT_RDWR))
    }

    deinit { Glibc.close(socket) }

    private func readLoop() {
        var raw = [UInt8]()
        var headersDone = false
        var chunked = false
        var body = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 65536)
        var ended = false
        while !ended {
            if state.withLock({ $0.paused }) {
                usleep(10_000)
                continue
            }
            let count = recv(socket, &buffer, buffer.count, 0)
            if count <= 0 { break }
            raw += buffer[0..<count]
            if !headersDone, let end = Self.find([13, 10, 13, 10], in: raw) {
                let head = String(decoding: raw[0..<end], as: UTF8.self)
                let statusCode = head.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
                chunked = head.lowercased().contains("transfer-encoding: chunked")
                state.withLock { $0.status = statusCode }
                raw.removeFirst(end + 4)
                headersDone = true
            }
            guard headersDone else { continue }
            if chunked {
                while let lineEnd = Self.find([13, 10], in: raw),
                    let size = Int(String(decoding: raw[0..<lineEnd], as: UTF8.self), radix: 16),
                    raw.count >= lineEnd + 2 + size + 2
                {
                    body += raw[(lineEnd + 2)..<(lineEnd + 2 + size)]
                    raw.removeFirst(lineEnd + 2 + size + 2)
                    // The zero-length chunk ends the response; the connection itself may stay open.
                    if size == 0 { ended = true }
                }
            } else {
                body += raw
                raw.removeAll()
            }
            while let end = Self.find([10, 10], in: body) {
                parse(String(decoding: body[0..<end], as: UTF8.self))
                body.removeFirst(end + 2)
            }
        }
        state.withLock { $0.closed = true }
    }

    private func parse(_ block: String) {
        var id: String?
        var event: String?
        var data: [String] = []
        var comment = false
        for line in block.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix(":") { comment = true; continue }
            if line.hasPrefix("id: ") { id = String(line.dropFirst(4)) }
            if line.hasPrefix("event: ") { event = String(line.dropFirst(7)) }
            if line.hasPrefix("data: ") { data.append(String(line.dropFirst(6))) }
        }
        state.withLock { state in
            if let id { state.lastEventID = id }
            if data.isEmpty {
                if comment { state.comments += 1 }
            } else {
                state.events.append(Event(id: id, event: event, data: data.joined(separator: "\n")))
            }
        }
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for index in 0...(haystack.count - needle.count) where haystack[index] == needle[0] {
            if Array(haystack[index..<(index + needle.count)]) == needle { return index }
        }
        return nil
    }

    enum SSEError: Error { case connect }
}
