import Credentials
import Foundation
import Logging
import Photos

/// Every setting of the service, by concern, read once from `LR_*` environment variables
/// and validated at start: a bad value stops the service with a message naming it. Each
/// variable is declared once (`AppConfiguration.settingGroups`), with its meaning and
/// range; the defaults are the initial values below.
public struct AppConfiguration: Sendable {
    public var server = ServerSettings()
    public var database = DatabaseSettings()
    public var accounts = AccountSettings()
    public var identity = IdentitySettings()
    public var events = EventSettings()
    public var shares = ShareSettings()
    public var web = WebAppSettings()
    public var operations = OperationsSettings()
    public var safety = SafetySettings()
    public var mail = MailSettings()
    public var photos = PhotoSettings()
    public var push = PushSettings()
    /// The time the service's rules read (codes' and messages' lifetimes); tests move their own.
    public var clock = WallClock.system

    public init() {}

    /// Reads the settings; throws `ConfigurationError` naming the first bad one.
    public init(environment: [String: String]) throws {
        for group in Self.settingGroups {
            for setting in group.settings {
                guard let text = environment[setting.name], !(text.isEmpty && setting.emptyIsDefault) else { continue }
                try setting.read(text, &self)
            }
        }
        // The owner's URL falls back to the service's.
        if database.migrateURL.isEmpty { database.migrateURL = database.url }
        for (variable, url) in [("LR_APNS_PRODUCTION_URL", push.apnsProductionURL), ("LR_APNS_SANDBOX_URL", push.apnsSandboxURL)]
        where !url.hasPrefix("https://") || url.hasSuffix("/") || url.contains(" ") {
            throw ConfigurationError(variable: variable, message: "must be an https URL without a path, like https://api.push.apple.com")
        }
        guard push.watchRadiusMin <= push.watchRadiusMax else {
            throw ConfigurationError(variable: "LR_WATCH_RADIUS_MAX_M", message: "must be at least LR_WATCH_RADIUS_MIN_M (\(push.watchRadiusMin))")
        }
        do { try accounts.scrypt.validate() } catch { throw ConfigurationError(variable: "LR_SCRYPT_LOG_N", message: "\(error)") }
    }

    /// The database URL the service needs; serving without one is a configuration error.
    public func requireDatabaseURL() throws -> String {
        guard !database.url.isEmpty else {
            throw ConfigurationError(variable: "LR_DATABASE_URL", message: "is required (a postgres:// URL or key=value conninfo)")
        }
        return database.url
    }
}

/// Where and how the service answers HTTP.
public struct ServerSettings: Sendable {
    public var host = "127.0.0.1"
    public var port = 8080
    /// Request bodies over this many bytes get `413`.
    public var bodyLimitBytes = 64 * 1024
    /// A request still running past this (or whose client went away) is cancelled, its
    /// statement with it.
    public var requestTimeout: Duration = .milliseconds(10000)
    public var trustedProxies = TrustedProxies.none
    public var logLevel = Logger.Level.info
    /// The OpenAPI document served at `/v1/openapi.json`, read once when the router is built.
    public var openAPIPath = "openapi/openapi.json"
    /// How long `serve` lets requests in flight finish after SIGTERM (`GracefulShutdown`).
    public var shutdownTimeout: Duration = .seconds(10)
}

/// The database: where it is, the pool, and the bound on every statement.
public struct DatabaseSettings: Sendable {
    public var url = ""
    /// The owner role's URL, for migrations and the admin commands; empty: `url`.
    public var migrateURL = ""
    public var migrationsDirectory = "sql/migrations"
    public var poolSize = 10
    public var acquireTimeout: Duration = .seconds(5)
    /// The server ends any statement of the service's pool that runs longer.
    public var statementTimeout: Duration = .milliseconds(5000)
    /// Prepared statements are planned once, for every value (`PostgresPool.Configuration
    /// .plansPreparedOnce`), except where the database has Citus.
    public var plansPreparedOnce = true
}

/// Passwords, sessions and the throttles on failed logins.
public struct AccountSettings: Sendable {
    /// Rows per statement (and per write) of `GET /v1/me/export`: what it holds in memory at once.
    public var exportPageSize = 500
    public var accessTokenLifetime = 3600
    /// `LR_ACCESS_TOKEN_KEYS`: the first signs access tokens, all verify. Nil: a key of the
    /// process alone.
    public var accessTokenKeys: [AccessTokenKey]? = nil
    public var refreshTokenLifetime = 30 * 24 * 3600
    /// A retired refresh token presented again within this many seconds gets a fresh pair.
    public var refreshGraceSeconds = 10
    /// Access tokens each replica keeps once looked up (`AccessTokenCache`); 0 keeps none.
    public var tokenCacheEntries = 100_000
    /// How often a replica reads the revocation epochs of the tenants it keeps tokens of.
    public var tokenCachePollInterval: Duration = .milliseconds(200)
    /// A kept token is used only while its last confirmation began less than this ago: the
    /// longest a revocation elsewhere can go unseen here.
    public var tokenCacheMaxAge: Duration = .milliseconds(750)
    public var scrypt = ScryptParameters.owaspDefault
    public var hashConcurrency = ProcessInfo.processInfo.activeProcessorCount
    public var hashQueueTimeout: Duration = .seconds(5)
    /// Failed password checks before `429`: for one account from one client address, from
    /// one address whatever it tries, and for one account from addresses it has not
    /// logged in from lately (`LoginThrottle`).
    public var loginFailuresPerUser = 5
    public var loginFailuresPerAddress = 50
    public var loginFailuresPerAccount = 100
}

/// The event streams (`GET /v1/events`).
public struct EventSettings: Sendable {
    public var streamsPerUser = 5
    public var streamsPerProcess = 2000
    public var heartbeat: Duration = .seconds(15)
    /// How long one write may wait for the client to read before the connection is closed.
    public var writeTimeout: Duration = .seconds(30)
    /// How often the event log's horizon is polled: the most an event waits before streams hear of it.
    public var pollInterval: Duration = .milliseconds(100)
    /// How long a new stream waits for its tenant's head before `503` (`EventHub.head`). Not
    /// an environment variable: the tests lengthen it, since each of them starts a service
    /// whose first head waits for every transaction open at its start (another suite's seed).
    public var readyTimeout: Duration = .seconds(5)
    /// A resume that would replay more than this many events gets a `reset` instead.
    public var replayMax = 10_000
    /// Events a stream sends per second at most, on average (bursts of a thousand).
    public var replayRate = 1000
    /// How long a stream ticket (`POST /v1/events/tickets`) may wait to be used, in seconds.
    public var ticketLifetime = 30
}

/// Fair shares (`FairShares`): of the database pool per user and per tenant (percent of the
/// pool), of hashing per client address (slots) and per tenant (percent of the hashing
/// concurrency), and how long a caller past its share waits before `429`.
public struct ShareSettings: Sendable {
    public var databasePerUserPercent = 25
    public var databasePerTenantPercent = 75
    public var hashingPerAddress = 1
    public var hashingPerTenantPercent = 75
    public var queueTimeout: Duration = .milliseconds(2000)
}

/// The service's own upkeep, on timers in every replica.
public struct OperationsSettings: Sendable {
    /// How often the service purges what has outlived its use (`RetentionService`); zero: never.
    public var retentionInterval: Duration = .seconds(3600)
    /// How often the cluster grid's deltas are folded into its cells; zero: never.
    public var gridFoldInterval: Duration = .milliseconds(1000)
}

/// What users may do to keep themselves safe (issue 34).
public struct SafetySettings: Sendable {
    /// How many users one user may block.
    public var blocksPerUser = 1000
    /// Reports one user may make in an hour.
    public var reportsPerUserPerHour = 20
    /// Reports one tenant may receive in an hour, from all its users together.
    public var reportsPerTenantPerHour = 1000
}

/// Push notifications (issue 39): the devices a user's pushes go to, and the areas they watch.
public struct PushSettings: Sendable {
    /// Devices one user may have; registering one more drops the one registered longest ago.
    public var devicesPerUser = 10
    /// Watches one user may have.
    public var watchesPerUser = 10
    /// The smallest and largest radius of a watch, in metres.
    public var watchRadiusMin = 100
    public var watchRadiusMax = 50_000
    /// Whether this replica sends pushes (every replica may; each push goes once).
    public var senderEnabled = true
    /// How often an idle sender looks for pushes to send.
    public var pollInterval: Duration = .seconds(1)
    /// Pushes one user gets per hour; more matches in the hour wait and go as one summary.
    public var perUserPerHour = 3
    /// How long a sender holds a tenant's queue without renewing it.
    public var lease: Duration = .seconds(60)
    /// The longest a tenant's pushes rest after APNs was busy, failing or silent.
    public var backoffCap: Duration = .seconds(300)
    /// Where APNs is, and how long a push may take.
    public var apnsProductionURL = "https://api.push.apple.com"
    public var apnsSandboxURL = "https://api.sandbox.push.apple.com"
    public var apnsCAFile = ""
    public var apnsTimeout: Duration = .seconds(10)
}

/// Photos on notes (issue 36): what an upload may be, and the sandboxed workers that decode it.
public struct PhotoSettings: Sendable {
    /// The largest upload, in bytes.
    public var maxBytes = 15_000_000
    /// The most pixels an upload's header may declare.
    public var maxPixels = 50_000_000
    /// Photos one note may have.
    public var perNote = 4
    /// Bytes of stored variants one user may have (about 1,000 phone photos).
    public var bytesPerUser = 500_000_000
    /// Bytes of stored variants one tenant may have.
    public var bytesPerTenant = 50_000_000_000
    /// Uploads decoded at once on this replica (each a worker process on one core).
    public var workers = 2
    /// Uploads one user may have in flight (their bodies being read, or waiting to decode).
    public var uploadsPerUser = 2
    /// Uploads this replica holds at once, everyone's together: a bound on the bodies in memory.
    public var uploadsInFlight = 16
    /// bubblewrap's namespaces around each worker, or only its limits (where user namespaces
    /// are not allowed: a container that is itself the boundary).
    public var isolation = PhotoSandbox.Isolation.bubblewrap
    /// Where each upload's job directory is made and removed.
    public var workDirectory = "/tmp"
    /// A worker still running after this long is killed (422 for its upload).
    public var timeout: Duration = .seconds(30)
    /// A worker's address space.
    public var workerMemoryMB = 1024
}
