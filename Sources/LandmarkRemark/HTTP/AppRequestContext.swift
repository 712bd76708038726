import HTTPTypes
import Hummingbird
import Synchronization
import NIOCore

/// Per-request state shared between middleware and handlers.
public struct AppRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The TCP peer; `ClientAddress` decides whether to believe `X-Forwarded-For` on top of it.
    public let remoteAddress: SocketAddress?
    /// The connection, so a handler can close it (an event stream whose client stopped reading).
    public let channel: any Channel
    /// The value echoed in `X-Request-Id` and written to every log line.
    public var requestID: String = ""
    /// Set by `Authenticator` on routes that need an access token.
    public var identity: Identity?
    /// The client address after trusted-proxy resolution, set by `ClientAddressMiddleware`.
    public var clientAddress: String = "unknown"
    /// Filled in once the tenant is known, for the request's log line.
    var tenantTag = TenantTag()

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
        channel = source.channel
    }

    /// The authenticated caller; handlers behind `Authenticator` can rely on it.
    public func requireIdentity() throws -> Identity {
        guard let identity else { throw AppError.unauthenticated }
        return identity
    }
}

/// Who is calling: resolved from the access token.
public struct Identity: Sendable {
    public let tenantID: Int64
    public let tenantSlug: String
    public let userID: Int64
    public let username: String
    public let sessionID: Int64
    /// The SHA-256 of the access token, as stored: event streams check it again as they run.
    public let accessTokenHash: [UInt8]
}

/// Lets inner layers tell the log line which tenant the request belonged to.
final class TenantTag: Sendable {
    private let slug = Mutex<String?>(nil)
    var value: String? { slug.withLock { $0 } }
    func set(_ value: String) { slug.withLock { $0 = value } }
}

extension HTTPField.Name {
    static let requestID = Self("X-Request-Id")!
    static let xForwardedFor = Self("X-Forwarded-For")!
    static let xTenant = Self("X-Tenant")!
    static let idempotencyKey = Self("Idempotency-Key")!
}
