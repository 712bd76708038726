import Hummingbird
import Logging
import ServiceLifecycle

/// How `serve` stops. On SIGTERM or SIGINT the server stops accepting
/// connections, lets the requests in flight finish, and only then are the
/// hashing pool and the database pool closed (services stop in reverse order).
///
/// `LR_SHUTDOWN_TIMEOUT_SECONDS` (`ServerSettings.shutdownTimeout`) bounds that wait: past it, whatever still runs
/// (a stuck client, a long event stream) is cancelled, so the process is gone
/// before an orchestrator's hard kill (Docker sends SIGKILL 10 s after SIGTERM
/// unless told otherwise; compose.yaml and the systemd unit allow more).
public struct GracefulShutdown: Sendable {
    /// `ServerSettings.shutdownTimeout` (`LR_SHUTDOWN_TIMEOUT_SECONDS`).
    public var timeout: Duration

    public init(timeout: Duration) { self.timeout = timeout }

    /// Runs the application until a signal asks it to stop; returns once it has.
    public func run(_ application: some ApplicationProtocol, logger: Logger) async throws {
        var configuration = ServiceGroupConfiguration(
            services: [.init(service: application)],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger)
        configuration.maximumGracefulShutdownDuration = timeout
        try await ServiceGroup(configuration: configuration).run()
    }
}
