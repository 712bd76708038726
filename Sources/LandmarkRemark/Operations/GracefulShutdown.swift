import Hummingbird
import Logging
import ServiceLifecycle

/// How `serve` stops. On SIGTERM or SIGINT the server stops accepting
/// connections, lets the requests in flight finish, and only then are the
/// hashing pool and the database pool closed (services stop in reverse order).
///
/// `LR_SHUTDOWN_TIMEOUT_SECONDS` bounds that wait: past it, whatever still runs
/// (a stuck client, a long event stream) is cancelled, so the process is gone
/// before an orchestrator's hard kill (Docker sends SIGKILL 10 s after SIGTERM
/// unless told otherwise; compose.yaml and the systemd unit allow more).
public struct GracefulShutdown: Sendable {
    public var timeout: Duration = .seconds(10)

    public init() {}

    /// Reads `LR_SHUTDOWN_TIMEOUT_SECONDS`; throws `ConfigurationError` naming it when bad.
    public init(environment: [String: String]) throws {
        let name = "LR_SHUTDOWN_TIMEOUT_SECONDS"
        guard let text = environment[name], !text.isEmpty else { return }
        guard let seconds = Int(text), (1...3600).contains(seconds) else {
            throw ConfigurationError(variable: name, message: "must be a whole number from 1 to 3600, not \"\(text)\"")
        }
        timeout = .seconds(seconds)
    }

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
