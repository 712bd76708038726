import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdHTTP2
import JWTKit
import Logging
import NIOCore
import Synchronization

/// A fake of APNs's provider API for tests: HTTP/2 over TLS on loopback (its own self-signed
/// certificate, which the client under test must be told to trust), checking what Apple
/// checks of a request: the provider token's ES256 signature against the team's key, its age
/// (an hour at most) and how often a connection's changes (20 minutes at least), the topic, the
/// headers, the payload's size and shape; and answering each device as a test scripts it
/// (`410 Unregistered`, `429`, `500`, or no answer at all).
public final class FakeAPNs: Sendable {
    /// One request as received, and how it was answered.
    public struct Received: Sendable {
        public let deviceToken: String
        public let teamID: String?
        public let providerToken: String?
        public let issuedAt: Date?
        public let headers: [String: String]
        public let payload: [UInt8]
        /// Over HTTP/2 (a stream of a connection), as APNs requires.
        public let http2: Bool
        /// The TCP connection it came on, numbered from 1 as they opened.
        public let connection: Int
        /// What it was answered; 0 for a request never answered (`.hang`).
        public let status: Int
        public let reason: String?

        /// The payload's JSON, for checks.
        public var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: Data(payload))) as? [String: Any] }
    }

    /// How to answer a device's next request.
    public enum Reply: Sendable {
        case status(Int, reason: String)
        /// Never answers (until the server stops).
        case hang
    }

    private struct Team {
        var keys: [String: ES256PublicKey] = [:]
        var topics: Set<String> = []
    }

    private struct State {
        var teams: [String: Team] = [:]
        var replies: [String: [Reply]] = [:]
        var received: [Received] = []
        /// Per connection, the provider token last accepted and its `iat`.
        var tokens: [Int: (jwt: String, issued: Date)] = [:]
        /// The open connections' numbers (a channel's identity is reused once it is freed).
        var connections: [ObjectIdentifier: Int] = [:]
        var lastConnection = 0
    }

    public let url: String
    /// The certificate to trust (PEM).
    public let caFile: String
    private let state = Mutex(State())
    private let now: @Sendable () -> Date
    private let server = Mutex<Task<Void, any Error>?>(nil)
    private let directory: URL

    private init(url: String, caFile: String, directory: URL, now: @escaping @Sendable () -> Date) {
        self.url = url
        self.caFile = caFile
        self.directory = directory
        self.now = now
    }

    /// Trusts `publicKeyPEM` as `keyID` of `teamID`, for pushes to `topics`.
    public func trust(teamID: String, keyID: String, publicKeyPEM: String, topics: Set<String>) throws {
        let key = try ES256PublicKey(pem: publicKeyPEM)
        state.withLock { state in
            state.teams[teamID, default: Team()].keys[keyID] = key
            state.teams[teamID, default: Team()].topics.formUnion(topics)
        }
    }

    /// Answers the next requests to `deviceToken` with `replies`, in order; then `200` again.
    public func reply(to deviceToken: String, with replies: Reply...) {
        state.withLock { $0.replies[deviceToken, default: []] += replies }
    }

    public var received: [Received] { state.withLock { $0.received } }

    /// Starts the server on a free loopback port, with a new certificate.
    public static func start(now: @escaping @Sendable () -> Date = { Date() }) async throws -> FakeAPNs {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fake-apns-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let keyFile = directory.appendingPathComponent("key.pem").path
        let certificateFile = directory.appendingPathComponent("certificate.pem").path
        try Self.run("/usr/bin/openssl", [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", keyFile,
            "-out", certificateFile, "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
        ])
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMFile(certificateFile).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(file: keyFile, format: .pem)))
        tls.applicationProtocols = ["h2", "http/1.1"]

        let (ports, portSink) = AsyncStream<Int>.makeStream()
        let holder = Mutex<FakeAPNs?>(nil)
        let router = Router(context: APNsRequestContext.self)
        router.post("/3/device/:token") { request, context -> Response in
            guard let fake = holder.withLock({ $0 }) else { return Response(status: .serviceUnavailable) }
            return try await fake.answer(request, context: context)
        }
        let application = Application(
            router: router, server: try .http2Upgrade(tlsConfiguration: tls),
            configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0), serverName: nil),
            onServerRunning: { channel in
                portSink.yield(channel.localAddress?.port ?? 0)
                portSink.finish()
            },
            logger: Logger(label: "fake-apns"))
        let task = Task {
            defer { portSink.finish() }
            try await application.run()
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else {
            task.cancel()
            try await task.value
            throw StoppedBeforeListening()
        }
        let fake = FakeAPNs(url: "https://127.0.0.1:\(port)", caFile: certificateFile, directory: directory, now: now)
        holder.withLock { $0 = fake }
        fake.server.withLock { $0 = task }
        return fake
    }

    struct StoppedBeforeListening: Error {}

    public func stop() async {
        let task = server.withLock { $0 }
        task?.cancel()
        _ = try? await task?.value
        try? FileManager.default.removeItem(at: directory)
    }

    deinit { server.withLock { $0 }?.cancel() }

    // MARK: - Answering

    private func answer(_ request: Request, context: APNsRequestContext) async throws -> Response {
        let token = context.parameters.get("token") ?? ""
        var headers: [String: String] = [:]
        for field in request.headers { headers[field.name.canonicalName] = field.value }
        let body = try await request.body.collect(upTo: 1 << 20)
        let payload = Array(buffer: body)
        let channel = context.channel
        let connection = number(channel.parent ?? channel)
        let (team, jwt, issued, refusal) = await check(headers: headers, deviceToken: token, payload: payload, connection: connection)
        let scripted: Reply? = refusal == nil ? state.withLock { state in
            guard var queue = state.replies[token], !queue.isEmpty else { return nil }
            let next = queue.removeFirst()
            state.replies[token] = queue
            return next
        } : nil
        var status = 200
        var reason: String?
        if let refusal {
            (status, reason) = refusal
        } else if case .status(let code, let why) = scripted {
            (status, reason) = (code, why)
        } else if case .hang = scripted {
            // Recorded as taken and never answered.
            status = 0
        }
        state.withLock {
            $0.received.append(Received(
                deviceToken: token, teamID: team, providerToken: jwt, issuedAt: issued, headers: headers, payload: payload,
                http2: channel.parent != nil, connection: connection, status: status, reason: reason))
        }
        if case .hang = scripted {
            try await Task.sleep(for: .seconds(3600))
        }
        var fields = HTTPFields()
        fields[HTTPField.Name("apns-id")!] = UUID().uuidString
        guard let reason else { return Response(status: .ok, headers: fields) }
        fields[.contentType] = "application/json"
        var json = "{\"reason\":\"\(reason)\""
        if status == 410 { json += ",\"timestamp\":\(Int64(now().timeIntervalSince1970 * 1000))" }
        json += "}"
        return Response(status: .init(code: status), headers: fields, body: .init(byteBuffer: ByteBuffer(string: json)))
    }

    /// The connection's number, given when its first request came; forgotten when it closes.
    private func number(_ connection: any Channel) -> Int {
        let key = ObjectIdentifier(connection)
        let (number, isNew) = state.withLock { state -> (Int, Bool) in
            if let known = state.connections[key] { return (known, false) }
            state.lastConnection += 1
            state.connections[key] = state.lastConnection
            return (state.lastConnection, true)
        }
        if isNew {
            connection.closeFuture.whenComplete { [weak self] _ in self?.state.withLock { _ = $0.connections.removeValue(forKey: key) } }
        }
        return number
    }

    /// Apple's checks, in Apple's words: nil when the request may be delivered.
    private func check(
        headers: [String: String], deviceToken: String, payload: [UInt8], connection: Int
    ) async -> (team: String?, jwt: String?, issued: Date?, refusal: (Int, String)?) {
        guard let authorization = headers["authorization"], authorization.hasPrefix("bearer ") else {
            return (nil, nil, nil, (403, "MissingProviderToken"))
        }
        let jwt = String(authorization.dropFirst("bearer ".count))
        guard let (teamID, issued) = await verify(jwt) else { return (nil, jwt, nil, (403, "InvalidProviderToken")) }
        let now = now()
        guard now.timeIntervalSince(issued) <= 3600 else { return (teamID, jwt, issued, (403, "ExpiredProviderToken")) }
        guard issued.timeIntervalSince(now) <= 60 else { return (teamID, jwt, issued, (403, "InvalidProviderToken")) }
        // A connection whose token changes more often than every 20 minutes (each replica of a
        // provider keeps a token of its own on its own connection).
        let tooSoon = state.withLock { state -> Bool in
            if let last = state.tokens[connection], last.jwt != jwt, issued.timeIntervalSince(last.issued) < 20 * 60 { return true }
            if state.tokens[connection]?.jwt != jwt { state.tokens[connection] = (jwt, issued) }
            return false
        }
        if tooSoon { return (teamID, jwt, issued, (429, "TooManyProviderTokenUpdates")) }
        let topics = state.withLock { $0.teams[teamID]?.topics ?? [] }
        let refusal: (Int, String)? =
            if !(64...200).contains(deviceToken.utf8.count) || !deviceToken.allSatisfy(\.isHexDigit) { (400, "BadDeviceToken") }
            else if headers["apns-topic"].map({ !topics.contains($0) }) ?? true { (400, headers["apns-topic"] == nil ? "MissingTopic" : "TopicDisallowed") }
            else if headers["apns-push-type"] != "alert" { (400, "InvalidPushType") }
            else if !["5", "10"].contains(headers["apns-priority"] ?? "") { (400, "BadPriority") }
            else if headers["apns-expiration"].flatMap({ Int64($0) }) == nil { (400, "BadExpirationDate") }
            else if (headers["apns-collapse-id"]?.utf8.count ?? 0) > 64 { (400, "BadCollapseId") }
            else if payload.count > 4096 { (413, "PayloadTooLarge") }
            else if ((try? JSONSerialization.jsonObject(with: Data(payload))) as? [String: Any])?["aps"] == nil { (400, "PayloadEmpty") }
            else { nil }
        return (teamID, jwt, issued, refusal)
    }

    private struct ProviderClaims: JWTPayload {
        let iss: IssuerClaim
        let iat: IssuedAtClaim
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    /// The team and `iat` of a provider token signed by one of the team's trusted keys.
    private func verify(_ jwt: String) async -> (String, Date)? {
        let segments = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3, let header = Self.decodeSegment(segments[0]), header["alg"] as? String == "ES256",
            let keyID = header["kid"] as? String, let claims = Self.decodeSegment(segments[1]), let teamID = claims["iss"] as? String,
            let key = state.withLock({ $0.teams[teamID]?.keys[keyID] })
        else { return nil }
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: key, kid: JWKIdentifier(string: keyID))
        guard let verified = try? await keys.verify(jwt, as: ProviderClaims.self) else { return nil }
        return (verified.iss.value, verified.iat.value)
    }

    private static func decodeSegment(_ segment: Substring) -> [String: Any]? {
        var text = segment.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        guard let data = Data(base64Encoded: text) else { return nil }
        return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
    }

    private static func run(_ executable: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw CommandFailed(command: ([executable] + arguments).joined(separator: " ")) }
    }

    struct CommandFailed: Error { let command: String }
}

/// A request's context with the channel it came on: an HTTP/2 stream's parent is its connection.
struct APNsRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}
