import Foundation
import HTTPTypes
import LandmarkRemarkAPI
import OpenAPIRuntime
#if canImport(OpenAPIURLSession)
import OpenAPIURLSession
#endif
#if canImport(OpenAPIAsyncHTTPClient)
import OpenAPIAsyncHTTPClient
#endif

/// The Landmark Remark API for one app (tenant): sign in, notes, places, live events.
///
/// ```swift
/// let remark = LandmarkRemark(baseURL: URL(string: "https://api.example.com")!, tenant: "harbour-walks",
///                             tokenStore: KeychainTokenStore())
/// try await remark.logIn(username: "alice", password: "correct horse battery")
/// let note = try await remark.createNote("Great coffee", at: Coordinate(latitude: -33.87, longitude: 151.21))
/// for try await nearby in remark.notes(NoteQuery(near: note.note.coordinate, radiusMeters: 10_000)) { … }
/// ```
///
/// Safe to share: every method may be called from any task. The session (tokens, refresh)
/// is kept by an actor inside.
public final class LandmarkRemark: Sendable {
    public let tenant: String
    let session: Session
    /// Signed-in calls: tenant, token (refreshed on `401`), problems as errors.
    let api: Client
    /// Calls without a token (sign-in, refresh) and the event stream's own client.
    let open: Client
    let streaming: Client
    let baseURL: URL
    let requests: any ClientTransport
    static let configuration = Configuration(dateTranscoder: .iso8601WithFractionalSeconds)

    /// - Parameters:
    ///   - baseURL: Where the service is, e.g. `https://api.example.com` (the client adds `/v1/…`).
    ///   - tenant: The app's tenant slug, sent as `X-Tenant`.
    ///   - tokenStore: Where the session lives between launches.
    ///   - transport: How requests go out; by default URLSession on Apple platforms and
    ///     AsyncHTTPClient on Linux. Inject one in tests.
    ///   - eventTransport: The same for the long-lived event stream (by default one without a
    ///     request timeout); `transport` when given and this is not.
    public init(
        baseURL: URL, tenant: String, tokenStore: any TokenStore = InMemoryTokenStore(),
        transport: (any ClientTransport)? = nil, eventTransport: (any ClientTransport)? = nil
    ) {
        self.tenant = tenant
        let requests = transport ?? Self.defaultTransport(streaming: false)
        self.requests = requests
        self.baseURL = baseURL
        let events = eventTransport ?? transport ?? Self.defaultTransport(streaming: true)
        let configuration = Self.configuration
        let tenantHeader = TenantMiddleware(tenant: tenant)
        let open = Client(serverURL: baseURL, configuration: configuration, transport: requests, middlewares: [tenantHeader, ProblemMiddleware()])
        self.open = open
        let session = Session(store: tokenStore) { [tenant] refreshToken in
            try await Self.perform {
                let output = try await open.refreshTokens(headers: .init(X_hyphen_Tenant: tenant), body: .json(.init(refresh_token: refreshToken)))
                return Self.stored(try output.ok.body.json)
            }
        }
        self.session = session
        api = Client(
            serverURL: baseURL, configuration: configuration, transport: requests,
            middlewares: [tenantHeader, AuthMiddleware(session: session), ProblemMiddleware()])
        streaming = Client(
            serverURL: baseURL, configuration: configuration, transport: events,
            middlewares: [tenantHeader, AuthMiddleware(session: session), ProblemMiddleware()])
    }

    static func defaultTransport(streaming: Bool) -> any ClientTransport {
        #if canImport(OpenAPIURLSession)
        let configuration = URLSessionConfiguration.default
        // For the stream this is how long it may go without a byte: the service sends a
        // keep-alive every 15 s, so 45 s of silence is a dead connection.
        configuration.timeoutIntervalForRequest = streaming ? 45 : 30
        return URLSessionTransport(configuration: .init(session: URLSession(configuration: configuration)))
        #else
        return AsyncHTTPClientTransport(configuration: .init(timeout: streaming ? .hours(24) : .seconds(30)))
        #endif
    }

    // MARK: Sessions

    /// `.signedOut` or `.signedIn(user)` now, then each change (sign-in, sign-out, a session
    /// the service ended), for as long as the caller iterates.
    public func authState() async -> AsyncStream<AuthState> {
        await session.states()
    }

    public var currentAuthState: AuthState {
        get async { await session.state }
    }

    @discardableResult
    public func signUp(username: String, password: String, email: String? = nil) async throws -> User {
        try await signedIn {
            try await open.signup(headers: .init(X_hyphen_Tenant: tenant), body: .json(.init(username: username, password: password, email: email))).created.body.json
        }
    }

    /// Logs in with a username (or email) and password.
    @discardableResult
    public func logIn(username: String, password: String) async throws -> User {
        try await signedIn {
            try await open.login(headers: .init(X_hyphen_Tenant: tenant), body: .json(.init(username: username, password: password))).ok.body.json
        }
    }

    /// Signs in with an ID token from Apple, Google or another provider the tenant accepts;
    /// the first time, this makes the account (`created`).
    @discardableResult
    public func signIn(
        idToken: String, provider: String, nonce: String? = nil, username: String? = nil, authorizationCode: String? = nil
    ) async throws -> (user: User, created: Bool) {
        var created = false
        let user = try await signedIn {
            let output = try await open.signInWithIDToken(
                headers: .init(X_hyphen_Tenant: tenant),
                body: .json(.init(
                    provider: provider, id_token: idToken, nonce: nonce, username: username.map { .init(value1: $0) },
                    authorization_code: authorizationCode)))
            switch output {
            case .created(let answer):
                created = true
                return try answer.body.json
            default:
                return try output.ok.body.json
            }
        }
        return (user, created)
    }

    /// Starts as a guest: an account with a generated name that becomes a full one by linking
    /// an identity or setting a password.
    @discardableResult
    public func signInAsGuest() async throws -> User {
        try await signedIn { try await open.signInAsGuest(headers: .init(X_hyphen_Tenant: tenant)).created.body.json }
    }

    /// Ends the session: here at once (a refresh under way is thrown away), then at the
    /// service (every session of the user with `everywhere`), best effort: signed out here
    /// even when the service cannot be reached. `device`, this device's APNs token, is removed
    /// with the session: its pushes stop (they would anyway, as the session ends).
    public func signOut(everywhere: Bool = false, device: Data? = nil) async {
        // A token the service still takes (refreshed first if it has expired here), so that
        // ending the session there works an hour after the last call too.
        let usable = try? await session.accessToken()
        let current = await session.signOut()
        guard let token = usable ?? current else { return }
        let client = Client(
            serverURL: baseURL, configuration: Self.configuration, transport: requests,
            middlewares: [TenantMiddleware(tenant: tenant), BearerMiddleware(token: token), ProblemMiddleware()])
        _ = try? await Self.perform { try await client.logout(query: .init(all: everywhere ? true : nil, device: device.map(Self.hex(deviceToken:)))) }
    }

    func signedIn(_ call: () async throws -> Components.Schemas.TokenResponse) async throws -> User {
        let tokens = try await Self.perform(call)
        let stored = Self.stored(tokens)
        await session.signedIn(stored)
        return stored.user
    }

    static func stored(_ tokens: Components.Schemas.TokenResponse) -> StoredSession {
        StoredSession(
            accessToken: tokens.access_token, refreshToken: tokens.refresh_token,
            accessTokenExpiresAt: Date().addingTimeInterval(TimeInterval(tokens.expires_in)), user: User(tokens.user))
    }

    /// Runs a generated call and says what went wrong in this client's terms.
    static func perform<T>(_ work: () async throws -> T) async throws -> T {
        do {
            return try await work()
        } catch let error as ClientError {
            throw translate(error)
        } catch let error as LandmarkRemarkError {
            throw error
        } catch let error as APIProblem {
            throw LandmarkRemarkError.api(error)
        } catch let error as CancellationError {
            throw error
        } catch let error as LandmarkRemarkError {
            throw error
        } catch {
            // The generated code refusing what came back (an undocumented status, a body that
            // does not decode).
            throw LandmarkRemarkError.unexpectedResponse(status: 0)
        }
    }

    static func translate(_ error: ClientError) -> any Error {
        switch error.underlyingError {
        case let problem as APIProblem: return LandmarkRemarkError.api(problem)
        case let error as LandmarkRemarkError: return error
        case let error as CancellationError: return error
        default:
            if Task.isCancelled { return CancellationError() }
            if let status = error.response?.status.code { return LandmarkRemarkError.unexpectedResponse(status: status) }
            return LandmarkRemarkError.network(underlying: error.underlyingError)
        }
    }
}
