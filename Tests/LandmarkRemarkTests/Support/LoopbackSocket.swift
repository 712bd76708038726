#if canImport(Glibc)
import Glibc
#endif

/// A TCP socket connected to 127.0.0.1:`port`, for tests that speak HTTP by hand (streams,
/// clients that hang up, malformed framing). `configure` sets socket options before connecting.
func connectLoopback(port: Int, configure: (Int32) -> Void = { _ in }) throws -> Int32 {
    let descriptor = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { throw SSEClient.SSEError.connect }
    configure(descriptor)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard connected == 0 else {
        Glibc.close(descriptor)
        throw SSEClient.SSEError.connect
    }
    return descriptor
}
