import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// One HTTP/1.1 exchange over a plain socket, for requests no HTTP client would send
/// (broken framing). Sends `request` as is and returns everything the server wrote
/// until it closed the connection or `timeout` passed. The blocking calls run on a
/// thread of their own, never on the test's executor. Every request here says
/// `Connection: close`, so a passing test never waits out the timeout: it is as long as
/// the streams' patience, for a machine whose two cores are busy with every other suite.
enum RawHTTP {
    struct Failure: Error { let message: String }

    static func exchange(port: Int, _ request: String, timeout: Duration = SSEClient.patience) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try blockingExchange(port: port, Array(request.utf8), timeout: timeout) })
            }
        }
    }

    private static func blockingExchange(port: Int, _ request: [UInt8], timeout: Duration) throws -> String {
        let descriptor = try connectLoopback(port: port) { descriptor in
            var wait = timeval(tv_sec: Int(timeout.components.seconds), tv_usec: 0)
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        }
        defer { close(descriptor) }
        guard request.withUnsafeBytes({ send(descriptor, $0.baseAddress, $0.count, 0) }) == request.count else {
            throw Failure(message: "send")
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count <= 0 { break }  // closed, or the timeout passed
            received += buffer[0..<count]
        }
        return String(decoding: received, as: UTF8.self)
    }
}
