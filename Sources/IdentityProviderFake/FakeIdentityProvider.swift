import Foundation
import Hummingbird
import Logging

/// An OpenID Connect provider for tests: serves discovery and a JWKS on a real socket, plays
/// Apple's token and revoke endpoints, and mints ID tokens (good ones, and every kind of bad one)
/// with keys it made at start.
///
/// ```swift
/// let idp = try await FakeIdentityProvider.start()
/// let token = try await idp.mint(idp.claims(subject: "alice", audience: "app"))
/// var expired = idp.claims(subject: "alice", audience: "app")
/// expired["exp"] = 1_000_000_000
/// let expiredToken = try await idp.mint(expired)
/// // … point the service at idp.jwksURL / idp.issuer and send it the tokens …
/// await idp.stop()
/// ```
public final class FakeIdentityProvider: Sendable {
    /// `http://HOST:PORT`, with the port the server actually bound.
    public let baseURL: String
    public let issuer: String

    public var jwksURL: String { baseURL + "/jwks" }
    public var tokenURL: String { baseURL + "/auth/token" }
    public var revokeURL: String { baseURL + "/auth/revoke" }

    let core: ProviderCore
    private let server: Task<Void, any Error>
    private let closeListener: @Sendable () async -> Void

    private init(
        baseURL: String, issuer: String, core: ProviderCore, server: Task<Void, any Error>,
        closeListener: @escaping @Sendable () async -> Void
    ) {
        self.baseURL = baseURL
        self.issuer = issuer
        self.core = core
        self.server = server
        self.closeListener = closeListener
    }

    /// Starts the provider on a real socket and returns once it is listening.
    ///
    /// - Parameters:
    ///   - port: 0 picks a free port; ``baseURL`` tells which.
    ///   - issuer: the `iss` of minted tokens and of discovery; the base URL when nil.
    public static func start(
        host: String = "127.0.0.1",
        port: Int = 0,
        issuer: String? = nil,
        logger: Logger = Logger(label: "fake-idp")
    ) async throws -> FakeIdentityProvider {
        let core = ProviderCore(keys: try SigningKeys.generate())

        // The listening socket arrives from `onServerRunning`; the stream ends without one if
        // the server stops first (e.g. the port is taken), and then the task holds the error.
        let (listeners, listenerSink) = AsyncStream<Listener>.makeStream()
        let application = Application(
            router: Routes.makeRouter(core: core),
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: nil),
            onServerRunning: { channel in
                listenerSink.yield(Listener(port: channel.localAddress?.port ?? port, close: { try? await channel.close() }))
                listenerSink.finish()
            },
            logger: logger
        )
        let server = Task {
            defer { listenerSink.finish() }
            try await application.run()
        }

        var listenerIterator = listeners.makeAsyncIterator()
        guard let listener = await listenerIterator.next() else {
            server.cancel()
            try await server.value
            throw FakeIdentityProviderError.stoppedBeforeListening
        }

        let baseURL = "http://\(host):\(listener.port)"
        let issuer = issuer ?? baseURL
        core.state.withLock {
            $0.baseURL = baseURL
            $0.issuer = issuer
        }
        return FakeIdentityProvider(baseURL: baseURL, issuer: issuer, core: core, server: server, closeListener: listener.close)
    }

    /// Stops the server: no new connections from the moment it is called, and it returns once
    /// the server has finished (at most about a second later).
    ///
    /// Hummingbird's graceful shutdown needs a ServiceLifecycle service group, which this target
    /// does not depend on. Instead the listening socket is closed, which ends the server once
    /// its connections are done; they end with their response (every response says
    /// `Connection: close`). Only a client holding a connection open past the grace period is
    /// cut off by cancelling the server. (Cancelling straight away would leave open keep-alive
    /// connections half-closed and unanswered, and log an error.)
    public func stop() async {
        await closeListener()
        let server = self.server
        await withTaskGroup(of: Void.self) { group in
            group.addTask { _ = try? await server.value }
            group.addTask {
                guard (try? await Task.sleep(for: Self.stopGracePeriod)) != nil else { return }
                server.cancel()
            }
            await group.next()
            group.cancelAll()
        }
    }

    static let stopGracePeriod = Duration.seconds(1)

    /// A provider a test forgot to stop still lets go of its port.
    deinit {
        server.cancel()
    }
}

/// The server's listening socket, as `onServerRunning` reports it.
private struct Listener: Sendable {
    let port: Int
    let close: @Sendable () async -> Void
}

public enum FakeIdentityProviderError: Error, Sendable {
    /// The server ended before it was listening, without saying why.
    case stoppedBeforeListening
}
