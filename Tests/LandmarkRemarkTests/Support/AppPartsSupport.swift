import HummingbirdTesting
@testable import LandmarkRemark

/// Builds the real application, as `withApp` does, and runs `body` with its parts: for a
/// test that waits on one as it runs (the token cache's next poll), never on time.
func withAppParts(
    _ adjust: (inout AppConfiguration) -> Void = { _ in },
    _ body: @Sendable (any TestClientProtocol, AppParts) async throws -> Void
) async throws {
    try await TestEnvironment.migrate()
    let parts = try await AppParts(configuration: try TestEnvironment.configuration(adjust), logger: TestEnvironment.logger)
    try await buildApplication(parts, logger: TestEnvironment.logger).test(.router) { try await body($0, parts) }
}
