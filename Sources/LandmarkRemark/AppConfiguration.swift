import Credentials
import Foundation
import Logging

/// Every setting of the service, read once from `LR_*` environment variables
/// and validated at start: a bad value stops the service with a message naming it.
/// `.env.example` documents each with its default.
public struct AppConfiguration: Sendable {
    public var host = "127.0.0.1"
    public var port = 8080
    public var databaseURL = ""
    public var migrateDatabaseURL = ""
    public var poolSize = 10
    public var poolAcquireTimeout: Duration = .seconds(5)
    public var migrationsDirectory = "sql/migrations"
    public var bodyLimitBytes = 64 * 1024
    public var accessTokenLifetime = 3600
    public var refreshTokenLifetime = 30 * 24 * 3600
    /// A retired refresh token presented again within this many seconds gets a fresh pair.
    public var refreshGraceSeconds = 10
    public var scrypt = ScryptParameters.owaspDefault
    public var hashConcurrency = ProcessInfo.processInfo.activeProcessorCount
    public var hashQueueTimeout: Duration = .seconds(5)
    public var trustedProxies = TrustedProxies.none
    /// Failed password checks before `429`: for one account from one client address
    /// (`LR_LOGIN_FAILURES_PER_USER`), and from one address whatever it tries.
    public var loginFailuresPerUser = 5
    public var loginFailuresPerAddress = 50
    public var logLevel = Logger.Level.info
    /// The OpenAPI document served at `/v1/openapi.json`, read once when the router is built.
    public var openAPIPath = "openapi/openapi.json"
    /// Event streams: how many one user and one process may hold open, and the keep-alive interval.
    public var eventStreamsPerUser = 5
    public var eventStreamsPerProcess = 2000
    public var eventHeartbeat: Duration = .seconds(15)
    /// How long one write to an event stream may wait for the client to read before the
    /// connection is closed; the client resumes with `Last-Event-ID`.
    public var eventWriteTimeout: Duration = .seconds(30)
    /// How often the event log's horizon is polled: the most an event waits before streams hear of it.
    public var eventPollInterval: Duration = .milliseconds(100)
    /// How long a new stream waits for its tenant's head before `503` (`EventHub.head`). Not a
    /// setting of its own: the tests lengthen it, since each of them starts a service whose
    /// first head waits for every transaction open at its start (another suite's long seed).
    public var eventReadyTimeout: Duration = .seconds(5)
    /// A resume that would replay more than this many events gets a `reset` instead.
    public var eventReplayMax = 10_000
    /// Events a stream sends per second at most, on average (bursts of a thousand).
    public var eventReplayRate = 1000

    // Accounts under abuse (issue 17).
    /// Failed password checks for one account from addresses it has not logged in from
    /// lately, before those addresses get `429` (see `LoginThrottle`).
    public var loginFailuresPerAccount = 100
    /// How often the service purges what has outlived its use (`RetentionService`); 0: never.
    public var retentionInterval: Duration = .seconds(3600)
    /// Bounded work per request: the server ends any statement of the service's pool that
    /// runs longer, and a request still running past its deadline (or whose client went away)
    /// is cancelled, its statement with it.
    public var statementTimeout: Duration = .milliseconds(5000)
    public var requestTimeout: Duration = .milliseconds(10000)
    /// Fair shares (`FairShares`): of the database pool per user and per tenant (percent of
    /// `poolSize`), of hashing per client address (slots) and per tenant (percent of
    /// `hashConcurrency`), and how long a caller past its share waits before `429`.
    public var dbSharePerUserPercent = 25
    public var dbSharePerTenantPercent = 75
    public var hashSharePerAddress = 1
    public var hashSharePerTenantPercent = 75
    public var shareQueueTimeout: Duration = .milliseconds(2000)

    // Sign-in with ID tokens and guests (issue 19).
    public var identity = IdentitySettings()

    // Browsers (issue 21).
    public var web = WebAppSettings()
    /// How long a stream ticket (`POST /v1/events/tickets`) may wait to be used.
    public var eventTicketLifetime = 30

    // Performance (issue 22).
    /// How often the cluster grid's deltas are folded into its cells; zero: never.
    public var gridFoldInterval: Duration = .milliseconds(1000)

    public init() {}

    /// Reads the settings; throws `ConfigurationError` naming the first bad one.
    public init(environment: [String: String]) throws {
        let reader = EnvironmentReader(environment: environment)
        host = reader.string("LR_HOST", default: host)
        port = try reader.integer("LR_PORT", default: port, range: 1...65535)
        databaseURL = reader.string("LR_DATABASE_URL", default: "")
        migrateDatabaseURL = reader.string("LR_MIGRATE_DATABASE_URL", default: databaseURL)
        poolSize = try reader.integer("LR_DB_POOL_SIZE", default: poolSize, range: 1...500)
        poolAcquireTimeout = .milliseconds(try reader.integer("LR_DB_ACQUIRE_TIMEOUT_MS", default: 5000, range: 1...600_000))
        migrationsDirectory = reader.string("LR_MIGRATIONS_DIR", default: migrationsDirectory)
        bodyLimitBytes = try reader.integer("LR_BODY_LIMIT_BYTES", default: bodyLimitBytes, range: 1024...(16 << 20))
        accessTokenLifetime = try reader.integer("LR_ACCESS_TOKEN_TTL_SECONDS", default: accessTokenLifetime, range: 1...(7 * 86400))
        refreshTokenLifetime = try reader.integer("LR_REFRESH_TOKEN_TTL_SECONDS", default: refreshTokenLifetime, range: 60...(365 * 86400))
        refreshGraceSeconds = try reader.integer("LR_REFRESH_GRACE_SECONDS", default: refreshGraceSeconds, range: 0...300)
        scrypt = ScryptParameters(
            logN: try reader.integer("LR_SCRYPT_LOG_N", default: scrypt.logN, range: 1...ScryptParameters.maximumLogN),
            r: try reader.integer("LR_SCRYPT_R", default: scrypt.r, range: 1...ScryptParameters.maximumR),
            p: try reader.integer("LR_SCRYPT_P", default: scrypt.p, range: 1...ScryptParameters.maximumP))
        do { try scrypt.validate() } catch { throw ConfigurationError(variable: "LR_SCRYPT_LOG_N", message: "\(error)") }
        hashConcurrency = try reader.integer("LR_HASH_CONCURRENCY", default: hashConcurrency, range: 1...256)
        hashQueueTimeout = .milliseconds(try reader.integer("LR_HASH_QUEUE_TIMEOUT_MS", default: 5000, range: 1...600_000))
        let proxies = reader.string("LR_TRUSTED_PROXIES", default: "")
        guard let parsed = TrustedProxies(list: proxies) else {
            throw ConfigurationError(variable: "LR_TRUSTED_PROXIES", message: "must be a comma-separated list of IP addresses or CIDR ranges")
        }
        trustedProxies = parsed
        loginFailuresPerUser = try reader.integer("LR_LOGIN_FAILURES_PER_USER", default: loginFailuresPerUser, range: 1...1000)
        loginFailuresPerAddress = try reader.integer("LR_LOGIN_FAILURES_PER_ADDRESS", default: loginFailuresPerAddress, range: 1...100_000)
        let level = reader.string("LR_LOG_LEVEL", default: "info")
        guard let parsedLevel = Logger.Level(rawValue: level) else {
            throw ConfigurationError(variable: "LR_LOG_LEVEL", message: "must be one of trace, debug, info, notice, warning, error, critical")
        }
        logLevel = parsedLevel
        openAPIPath = reader.string("LR_OPENAPI_PATH", default: openAPIPath)
        eventStreamsPerUser = try reader.integer("LR_EVENTS_MAX_STREAMS_PER_USER", default: eventStreamsPerUser, range: 1...1000)
        eventStreamsPerProcess = try reader.integer("LR_EVENTS_MAX_STREAMS", default: eventStreamsPerProcess, range: 1...100_000)
        eventHeartbeat = .seconds(try reader.integer("LR_EVENTS_HEARTBEAT_SECONDS", default: 15, range: 1...300))
        eventWriteTimeout = .seconds(try reader.integer("LR_EVENTS_WRITE_TIMEOUT_SECONDS", default: 30, range: 1...3600))
        eventPollInterval = .milliseconds(try reader.integer("LR_EVENTS_POLL_INTERVAL_MS", default: 100, range: 10...10_000))
        eventReplayMax = try reader.integer("LR_EVENTS_REPLAY_MAX", default: eventReplayMax, range: 100...1_000_000)
        eventReplayRate = try reader.integer("LR_EVENTS_REPLAY_PER_SECOND", default: eventReplayRate, range: 10...1_000_000)
        statementTimeout = .milliseconds(try reader.integer("LR_DB_STATEMENT_TIMEOUT_MS", default: 5000, range: 10...600_000))
        requestTimeout = .milliseconds(try reader.integer("LR_REQUEST_TIMEOUT_MS", default: 10000, range: 10...600_000))
        dbSharePerUserPercent = try reader.integer("LR_DB_SHARE_PER_USER_PERCENT", default: dbSharePerUserPercent, range: 1...100)
        dbSharePerTenantPercent = try reader.integer("LR_DB_SHARE_PER_TENANT_PERCENT", default: dbSharePerTenantPercent, range: 1...100)
        hashSharePerAddress = try reader.integer("LR_HASH_SHARE_PER_ADDRESS", default: hashSharePerAddress, range: 1...256)
        hashSharePerTenantPercent = try reader.integer("LR_HASH_SHARE_PER_TENANT_PERCENT", default: hashSharePerTenantPercent, range: 1...100)
        shareQueueTimeout = .milliseconds(try reader.integer("LR_SHARE_QUEUE_TIMEOUT_MS", default: 2000, range: 1...600_000))

        // Accounts under abuse (issue 17).
        loginFailuresPerAccount = try reader.integer("LR_LOGIN_FAILURES_PER_ACCOUNT", default: loginFailuresPerAccount, range: 1...1_000_000)
        retentionInterval = .seconds(try reader.integer("LR_RETENTION_INTERVAL_SECONDS", default: 3600, range: 0...86400))

        // Sign-in with ID tokens and guests (issue 19).
        identity.allowLoopbackKeyURLs = try reader.boolean("LR_IDENTITY_ALLOW_LOOPBACK", default: false)
        identity.guestsPerAddressPerHour = try reader.integer(
            "LR_GUESTS_PER_ADDRESS_PER_HOUR", default: identity.guestsPerAddressPerHour, range: 1...100_000)
        let dataKey = reader.string("LR_DATA_KEY", default: "")
        if !dataKey.isEmpty {
            // Standard base64 (what `openssl rand -base64 32` prints) or base64url.
            let urlSafe = dataKey.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            guard let bytes = Base64URL.decode(urlSafe), bytes.count == 32 else {
                throw ConfigurationError(variable: "LR_DATA_KEY", message: "must be 32 random bytes in base64 (openssl rand -base64 32)")
            }
            identity.dataKey = bytes
        }

        // Browsers (issue 21). An empty LR_WEB_DIR serves no app; LR_MAP_TILE_URL=none shows no tiles.
        web.directory = environment["LR_WEB_DIR"] ?? web.directory
        web.leafletDirectory = reader.string("LR_WEB_LEAFLET_DIR", default: web.leafletDirectory)
        web.tenant = reader.string("LR_WEB_TENANT", default: web.tenant)
        let tiles = reader.string("LR_MAP_TILE_URL", default: web.tileURL)
        // Its host goes into the Content-Security-Policy: nothing that could end a directive.
        guard tiles == "none" || ((tiles.hasPrefix("https://") || tiles.hasPrefix("http://"))
            && !tiles.contains(where: { $0 == ";" || $0 == "," || $0 == "'" || $0 == "\"" || $0.isWhitespace })) else {
            throw ConfigurationError(
                variable: "LR_MAP_TILE_URL", message: "must be an http(s) URL template like https://tile.openstreetmap.org/{z}/{x}/{y}.png, or none")
        }
        web.tileURL = tiles == "none" ? "" : tiles
        web.tileAttribution = reader.string("LR_MAP_TILE_ATTRIBUTION", default: web.tileAttribution)
        let google = reader.string("LR_WEB_SIGN_IN_GOOGLE", default: "")
        if !google.isEmpty { web.signIn.append(.google(clientID: google)) }
        let apple = reader.string("LR_WEB_SIGN_IN_APPLE", default: "")
        if !apple.isEmpty { web.signIn.append(.apple(clientID: apple)) }
        let oidc = reader.string("LR_WEB_SIGN_IN_OIDC", default: "")
        if !oidc.isEmpty {
            guard let provider = WebSignIn.oidc(oidc) else {
                throw ConfigurationError(
                    variable: "LR_WEB_SIGN_IN_OIDC", message: "must be \"oidc:<name> <client id> <authorization URL> [label]\", not \"\(oidc)\"")
            }
            web.signIn.append(provider)
        }
        eventTicketLifetime = try reader.integer("LR_EVENT_TICKET_TTL_SECONDS", default: eventTicketLifetime, range: 5...300)

        // Performance (issue 22).
        gridFoldInterval = .milliseconds(try reader.integer("LR_GRID_FOLD_INTERVAL_MS", default: 1000, range: 0...600_000))
    }

    /// The database URL the service needs; serving without one is a configuration error.
    public func requireDatabaseURL() throws -> String {
        guard !databaseURL.isEmpty else {
            throw ConfigurationError(variable: "LR_DATABASE_URL", message: "is required (a postgres:// URL or key=value conninfo)")
        }
        return databaseURL
    }
}

/// A setting with a bad value; the message names the variable and what it must be.
public struct ConfigurationError: Error, CustomStringConvertible {
    public let variable: String
    public let message: String
    public var description: String { "\(variable) \(message)" }
}

private struct EnvironmentReader {
    let environment: [String: String]

    func string(_ name: String, default value: String) -> String {
        guard let text = environment[name], !text.isEmpty else { return value }
        return text
    }

    func boolean(_ name: String, default value: Bool) throws -> Bool {
        guard let text = environment[name], !text.isEmpty else { return value }
        switch text.lowercased() {
        case "1", "true", "yes", "on": return true
        case "0", "false", "no", "off": return false
        default: throw ConfigurationError(variable: name, message: "must be true or false, not \"\(text)\"")
        }
    }

    func integer(_ name: String, default value: Int, range: ClosedRange<Int>) throws -> Int {
        guard let text = environment[name], !text.isEmpty else { return value }
        guard let number = Int(text), range.contains(number) else {
            throw ConfigurationError(variable: name, message: "must be a whole number from \(range.lowerBound) to \(range.upperBound), not \"\(text)\"")
        }
        return number
    }
}
