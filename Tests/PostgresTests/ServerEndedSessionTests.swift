import Foundation
#if canImport(Glibc)
import Glibc
#endif
import NIOPosix
@testable import Postgres
import Testing
import TestPolling

/// A server ends a session (`pg_terminate_backend`, `idle_session_timeout`, shutdown) by
/// sending an error of severity FATAL, then closing the socket. The close can come a good
/// while later: a Citus coordinator's backend first closes its own connections to the
/// workers, and `make test-citus` caught the pool lending such a connection in that window
/// (`PoolTests.connectionsTerminatedByTheServerAreReplaced`: `connectionLost`). Here the
/// real libpq talks to a server on loopback that says FATAL and keeps the socket open.
@Suite(.timeLimit(.minutes(10))) struct ServerEndedSessionTests {
    @Test func anIdleConnectionWhoseServerSaidFatalIsNotLentAgain() async throws {
        let server = try OneSessionServer()
        defer { server.close() }
        // Where a connection would send a cancel request: never used here, but owned.
        let threads = NIOThreadPool.singleton
        let conninfo = "host=127.0.0.1 port=\(server.port) user=test dbname=test sslmode=disable gssencmode=disable connect_timeout=30"
        // Connecting blocks: off the cooperative pool.
        let connection = try await Task.detached {
            try LibPQConnection(conninfo: conninfo, readiness: try SocketReadiness(), cancelThreads: threads)
        }.value
        #expect(connection.probeIdle() && connection.isIdle, "a quiet idle connection is fit to lend")

        server.endSession()
        let noticed = try await eventually(within: .seconds(30)) { !connection.probeIdle() }
        #expect(noticed, "the FATAL was read, and the connection still looked fit to lend")
        #expect(!connection.isIdle)
        #expect(server.isStillOpen, "the server kept the socket open: the FATAL alone told the connection")
    }
}

/// Just enough of a PostgreSQL server for one session: trust authentication, an answer to
/// the simple query every connection sends first, then, on `endSession()`, a FATAL error,
/// with the socket left open until `close()`.
private final class OneSessionServer: @unchecked Sendable {
    let port: Int
    private let listener: Int32
    private let lock = NSCondition()
    private var client: Int32 = -1
    private var ending = false
    private var closed = false

    init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(listener, pointer, length) == 0 && listen(listener, 1) == 0 && getsockname(listener, pointer, &length) == 0
            }
        }
        guard listener >= 0, bound else { throw POSIXError(.EADDRNOTAVAIL) }
        self.listener = listener
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread { [self] in serve() }.start()
    }

    var isStillOpen: Bool {
        lock.lock()
        defer { lock.unlock() }
        return client >= 0 && !closed
    }

    func endSession() {
        lock.lock()
        ending = true
        lock.broadcast()
        lock.unlock()
    }

    func close() {
        lock.lock()
        closed = true
        lock.broadcast()
        lock.unlock()
        shutdown(listener, Int32(SHUT_RDWR))
        Glibc.close(listener)
    }

    private func serve() {
        let accepted = accept(listener, nil, nil)
        guard accepted >= 0 else { return }
        lock.lock()
        client = accepted
        lock.unlock()
        defer { Glibc.close(accepted) }
        // The startup packet (no type byte): length, protocol, parameters.
        guard let startup = readCount(accepted), read(accepted, count: startup - 4) != nil else { return }
        var hello = message("R", int32(0))  // AuthenticationOk
        for (name, value) in [("server_version", "15.0"), ("server_encoding", "UTF8"), ("client_encoding", "UTF8"),
                              ("standard_conforming_strings", "on"), ("integer_datetimes", "on"), ("DateStyle", "ISO, MDY")] {
            hello += message("S", Array(name.utf8) + [0] + Array(value.utf8) + [0])
        }
        hello += message("K", int32(4242) + int32(1))  // BackendKeyData
        hello += message("Z", [UInt8(ascii: "I")])  // ReadyForQuery
        guard write(accepted, hello) else { return }
        // The connection's first statement (`SET DateStyle …`), a simple query.
        guard read(accepted, count: 1) == [UInt8(ascii: "Q")], let length = readCount(accepted), read(accepted, count: length - 4) != nil else { return }
        guard write(accepted, message("C", Array("SET".utf8) + [0]) + message("Z", [UInt8(ascii: "I")])) else { return }

        lock.lock()
        while !ending && !closed { lock.wait() }
        let end = ending && !closed
        lock.unlock()
        guard end else { return }
        var fields: [UInt8] = []
        for (code, value) in [("S", "FATAL"), ("V", "FATAL"), ("C", "57P01"), ("M", "terminating connection due to administrator command")] {
            fields += Array(code.utf8) + Array(value.utf8) + [0]
        }
        guard write(accepted, message("E", fields + [0])) else { return }
        lock.lock()
        while !closed { lock.wait() }
        lock.unlock()
    }

    private func message(_ type: Character, _ body: [UInt8]) -> [UInt8] {
        [type.asciiValue!] + int32(Int32(body.count + 4)) + body
    }

    private func int32(_ value: Int32) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian, Array.init)
    }

    private func readCount(_ socket: Int32) -> Int? {
        read(socket, count: 4).map { Int(Int32(bigEndian: $0.withUnsafeBytes { $0.loadUnaligned(as: Int32.self) })) }
    }

    private func read(_ socket: Int32, count: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let got = bytes.withUnsafeMutableBytes { recv(socket, $0.baseAddress! + done, count - done, 0) }
            if got <= 0 { return nil }
            done += got
        }
        return bytes
    }

    private func write(_ socket: Int32, _ bytes: [UInt8]) -> Bool {
        var done = 0
        while done < bytes.count {
            let sent = bytes.withUnsafeBytes { send(socket, $0.baseAddress! + done, bytes.count - done, Int32(MSG_NOSIGNAL)) }
            if sent <= 0 { return false }
            done += sent
        }
        return true
    }
}
