import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOSSL
import Synchronization

/// Sends notifications through APNs's provider API: HTTP/2 over TLS, token-based
/// authentication. Each team has its own HTTP client, so its notifications share one
/// connection per environment (HTTP/2 multiplexes them), as Apple asks of providers.
public final class APNsClient: Sendable {
    public struct Configuration: Sendable {
        public var productionURL = "https://api.push.apple.com"
        public var sandboxURL = "https://api.sandbox.push.apple.com"
        /// Certificate authorities to trust instead of the system's (a test's fake APNs).
        public var caFile: String?
        /// The longest one notification may take, connecting included.
        public var timeout: Duration = .seconds(10)
        /// How long a provider token is reused: Apple refuses one older than an hour.
        public var tokenLifetime: Duration = .seconds(50 * 60)

        public init() {}
    }

    let configuration: Configuration
    private let tokens: ProviderTokens
    private let clients = Mutex<[String: HTTPClient]>([:])

    public init(configuration: Configuration, now: @escaping @Sendable () -> Date = { Date() }) {
        self.configuration = configuration
        tokens = ProviderTokens(lifetime: Double(configuration.tokenLifetime.components.seconds), now: now)
    }

    /// Closes every team's connections.
    public func shutdown() async {
        let all = clients.withLock { clients in
            defer { clients = [:] }
            return Array(clients.values)
        }
        for client in all { try? await client.shutdown() }
    }

    /// Sends `notification` with the team's `credentials` and says what became of it; never throws.
    public func send(_ notification: APNsNotification, credentials: APNsCredentials, logger: Logger) async -> APNsOutcome {
        guard notification.payload.count <= APNsNotification.maxPayloadBytes else {
            return .rejected(status: 413, reason: "PayloadTooLarge")
        }
        let token: ProviderTokens.Token
        do {
            token = try await tokens.token(for: credentials)
        } catch {
            return .credentialsRefused(reason: "the team's key cannot sign: \(error)")
        }
        let (outcome, expired) = await post(notification, token: token, credentials: credentials, logger: logger)
        guard expired else { return outcome }
        // Expired by APNs's clock: once with a new token, if ours is old enough to renew.
        guard let renewed = try? await tokens.renew(token, for: credentials) else {
            return .retryLater(status: 403, reason: "ExpiredProviderToken (a token younger than 20 minutes: is this clock right?)", retryAfter: 60)
        }
        return await post(notification, token: renewed, credentials: credentials, logger: logger).outcome
    }

    private func post(
        _ notification: APNsNotification, token: ProviderTokens.Token, credentials: APNsCredentials, logger: Logger
    ) async -> (outcome: APNsOutcome, expired: Bool) {
        let base = notification.environment == .production ? configuration.productionURL : configuration.sandboxURL
        var request = HTTPClientRequest(url: "\(base)/3/device/\(notification.deviceToken)")
        request.method = .POST
        request.headers.add(name: "authorization", value: "bearer \(token.jwt)")
        request.headers.add(name: "apns-push-type", value: "alert")
        request.headers.add(name: "apns-topic", value: notification.topic)
        request.headers.add(name: "apns-expiration", value: String(Int64(notification.expiration.timeIntervalSince1970)))
        request.headers.add(name: "apns-priority", value: String(notification.priority))
        if let collapseID = notification.collapseID { request.headers.add(name: "apns-collapse-id", value: collapseID) }
        request.headers.add(name: "content-type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: notification.payload))
        do {
            let client = try self.client(for: credentials.teamID)
            let response = try await client.execute(request, timeout: .init(configuration.timeout))
            let body = try await response.body.collect(upTo: 64 * 1024)
            let reason = Self.reason(in: body) ?? response.status.reasonPhrase
            let retryAfter = response.headers.first(name: "retry-after").flatMap { Int($0) }
            let outcome = Self.outcome(status: Int(response.status.code), reason: reason, apnsID: response.headers.first(name: "apns-id"), retryAfter: retryAfter)
            return (outcome, response.status.code == 403 && reason == "ExpiredProviderToken")
        } catch {
            logger.warning("APNs did not answer", metadata: ["team": "\(credentials.teamID)", "error": "\(error)"])
            return (.retryLater(status: nil, reason: "no answer: \(error)", retryAfter: nil), false)
        }
    }

    /// What an answer means for the sender (Apple's "Handling notification responses from APNs").
    static func outcome(status: Int, reason: String, apnsID: String?, retryAfter: Int?) -> APNsOutcome {
        switch status {
        case 200: .delivered(apnsID: apnsID)
        case 410: .unregistered(reason: reason)
        case 400 where reason == "BadDeviceToken" || reason == "DeviceTokenNotForTopic": .unregistered(reason: reason)
        case 403: .credentialsRefused(reason: reason)
        case 429, 500...599: .retryLater(status: status, reason: reason, retryAfter: retryAfter)
        default: .rejected(status: status, reason: reason)
        }
    }

    /// `{"reason": "..."}`, the body of every refusal.
    private static func reason(in body: ByteBuffer) -> String? {
        guard body.readableBytes > 0, let object = try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any] else { return nil }
        return object["reason"] as? String
    }

    private func client(for teamID: String) throws -> HTTPClient {
        if let client = clients.withLock({ $0[teamID] }) { return client }
        var tls = TLSConfiguration.makeClientConfiguration()
        if let caFile = configuration.caFile { tls.trustRoots = .file(caFile) }
        var settings = HTTPClient.Configuration(tlsConfiguration: tls)
        settings.httpVersion = .automatic
        settings.timeout = .init(connect: .init(configuration.timeout))
        let made = HTTPClient(eventLoopGroupProvider: .singleton, configuration: settings)
        let (client, spare) = clients.withLock { clients -> (HTTPClient, HTTPClient?) in
            if let existing = clients[teamID] { return (existing, made) }
            clients[teamID] = made
            return (made, nil)
        }
        if let spare { Task { try? await spare.shutdown() } }
        return client
    }
}
