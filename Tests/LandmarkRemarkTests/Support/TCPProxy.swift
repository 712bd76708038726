#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

/// A TCP proxy on 127.0.0.1 in front of the service, for tests of what a client does when the
/// network fails in ways a real one does: an answer lost after the server sent it (the
/// connection closes before the client reads it), a long stream cut halfway. Plain blocking
/// sockets, two threads per connection.
final class TCPProxy: Sendable {
    /// What to break, and how often it was broken.
    struct Faults: Sendable {
        /// The next request whose first line starts with this loses its answer: the proxy passes
        /// the request on, waits for the server's first bytes, and closes the connection.
        var dropAnswerTo: String?
        /// Event streams (`GET /v1/events`) are cut after this many events each, this many times.
        var cutStreamsAfterEvents = 0
        var streamCutsLeft = 0
        private(set) var answersDropped = 0
        private(set) var streamsCut = 0

        mutating func droppedAnswer() { answersDropped += 1 }
        mutating func cutStream() { streamsCut += 1 }
    }

    let port: Int
    private let listener: Int32
    private let upstreamPort: Int
    let faults = Mutex(Faults())

    init(upstreamPort: Int) throws {
        self.upstreamPort = upstreamPort
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var reuse: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(listener, socketAddress, length) == 0 && listen(listener, 64) == 0
                    && getsockname(listener, socketAddress, &length) == 0
            }
        }
        guard bound else { throw ProxyError.cannotListen }
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in
            while true {
                let client = accept(listener, nil, nil)
                guard client >= 0 else { return }
                handle(client)
            }
        }
    }

    enum ProxyError: Error {
        case cannotListen
    }

    func close() {
        shutdown(listener, Int32(SHUT_RDWR))
        Glibc.close(listener)
    }

    private func handle(_ client: Int32) {
        guard let server = try? connectLoopback(port: upstreamPort) else {
            Glibc.close(client)
            return
        }
        let connection = Connection(client: client, server: server)
        Thread.detachNewThread { [self] in
            self.pumpRequests(connection)
            connection.pumpEnded()
        }
        Thread.detachNewThread { [self] in
            self.pumpAnswers(connection)
            connection.pumpEnded()
        }
    }

    /// Client to server: notes which requests this connection carries.
    private func pumpRequests(_ connection: Connection) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = read(connection.client, &buffer, buffer.count)
            guard count > 0 else { return connection.closeBoth() }
            let text = String(decoding: buffer[..<count], as: UTF8.self)
            if text.hasPrefix("GET /v1/events") { connection.state.withLock { $0.isStream = true } }
            faults.withLock { faults in
                if let prefix = faults.dropAnswerTo, text.hasPrefix(prefix) {
                    faults.dropAnswerTo = nil
                    connection.state.withLock { $0.dropAnswer = true }
                }
            }
            guard writeAll(connection.server, buffer[..<count]) else { return connection.closeBoth() }
        }
    }

    /// Server to client: drops an answer or cuts a stream when told to.
    private func pumpAnswers(_ connection: Connection) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var events = 0
        while true {
            let count = read(connection.server, &buffer, buffer.count)
            guard count > 0 else { return connection.closeBoth() }
            if connection.state.withLock({ $0.dropAnswer }) {
                faults.withLock { $0.droppedAnswer() }
                return connection.closeBoth()
            }
            let chunk = Array(buffer[..<count])
            if connection.state.withLock({ $0.isStream }), let end = cutPoint(in: chunk, eventsSoFar: &events) {
                // Forward up to the end of the event the cut comes after, then cut.
                _ = writeAll(connection.client, chunk[..<end])
                return connection.closeBoth()
            }
            guard writeAll(connection.client, chunk[...]) else { return connection.closeBoth() }
        }
    }

    /// Where to cut a stream in this chunk (just past the blank line ending the event that
    /// reaches the limit), claiming one of the cuts left; nil to pass the chunk on whole.
    private func cutPoint(in chunk: [UInt8], eventsSoFar events: inout Int) -> Int? {
        var index = 0
        while index + 1 < chunk.count {
            if chunk[index] == UInt8(ascii: "\n") && chunk[index + 1] == UInt8(ascii: "\n") {
                events += 1
                let cut = faults.withLock { faults -> Bool in
                    guard faults.streamCutsLeft > 0, events >= faults.cutStreamsAfterEvents else { return false }
                    faults.streamCutsLeft -= 1
                    faults.cutStream()
                    return true
                }
                if cut { return index + 2 }
            }
            index += 1
        }
        return nil
    }

    private func writeAll(_ descriptor: Int32, _ bytes: ArraySlice<UInt8>) -> Bool {
        var offset = bytes.startIndex
        while offset < bytes.endIndex {
            let written = bytes[offset...].withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }

    private final class Connection: Sendable {
        struct State {
            var isStream = false
            var dropAnswer = false
            var pumpsEnded = 0
        }

        let client: Int32
        let server: Int32
        let state = Mutex(State())

        init(client: Int32, server: Int32) {
            self.client = client
            self.server = server
        }

        /// Ends both directions: each pump's blocked read returns, and it stops.
        func closeBoth() {
            shutdown(client, Int32(SHUT_RDWR))
            shutdown(server, Int32(SHUT_RDWR))
        }

        /// The descriptors are closed when both pumps are done with them, never while one may
        /// still use a number the system could hand to a new connection.
        func pumpEnded() {
            closeBoth()
            let last = state.withLock { state -> Bool in
                state.pumpsEnded += 1
                return state.pumpsEnded == 2
            }
            if last {
                Glibc.close(client)
                Glibc.close(server)
            }
        }
    }
}
