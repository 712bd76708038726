import NIOPosix

/// An `SMTPClient` on a thread of its own, for async callers: curl's transfer blocks, and
/// must never block an event loop or Swift's cooperative pool. One thread, so one message at a
/// time and one kept connection per relay; callers queue behind each other in order.
public final class MailTransport: Sendable {
    private let thread = NIOThreadPool(numberOfThreads: 1)
    private let client: ThreadConfined

    public init() {
        client = ThreadConfined(client: SMTPClient())
        thread.start()
    }

    /// Sends on the transport's thread. Throws `MailError` for a message that cannot be
    /// expressed, or NIO's error once the transport was shut down.
    public func send(_ message: MailMessage, via endpoint: SMTPEndpoint) async throws -> SMTPOutcome {
        let client = self.client
        return try await thread.runIfActive { try client.client.send(message, via: endpoint) }
    }

    /// Waits for the message in progress, if any, then stops the thread.
    public func shutdown() async throws {
        try await thread.shutdownGracefully()
    }
}

/// The client, only ever touched on the transport's one thread, one job at a time.
private struct ThreadConfined: @unchecked Sendable {
    let client: SMTPClient
}
