import APNs
import AsyncHTTPClient
import Credentials
import Foundation
import Logging
import Photos
import Postgres
import ServiceLifecycle

/// The service's parts, made once from the settings: the pools, the stores and services
/// the controllers are given (each controller only the ones it uses), and the background
/// services the application runs.
struct AppParts: Sendable {
    let configuration: AppConfiguration
    let pool: PostgresPool
    let hashingPool: HashingPool
    let migrator: PostgresMigrator
    let shares: FairShares
    /// Fans the event log's progress out to open `/v1/events` streams.
    let events: EventHub
    let tenants: TenantStore
    let users = UserStore()
    let sessions: SessionStore
    let hashing: PasswordHashing
    let login: LoginService
    let identities: IdentityService
    /// Where every access token is checked: the authenticator, stream tickets, the event stream.
    let tokens = AccessTokenStore()
    /// The tokens this replica looked up lately, and what it must forget when it revokes.
    let tokenCache: AccessTokenCache
    let notes = NoteStore()
    /// The tenants' word lists, kept for creates in one round trip.
    let writeRules = WriteRulesCache()
    let places = PlaceStore()
    /// Delivers the mail outbox (codes, links, notices).
    let mailSender: MailSender
    /// Sends what matching queued to APNs (issue 39).
    let pushSender: PushSender
    /// The account messages, written with their codes.
    let accountMail: AccountMail
    let resets: PasswordResetService
    /// The sandboxed photo workers' threads, and the sanitiser that runs them.
    let photoWorkers: PhotoWorkers
    let photoSanitiser: PhotoSanitiser

    init(configuration: AppConfiguration, logger: Logger) async throws {
        self.configuration = configuration
        pool = try PostgresPool(
            configuration: .init(
                conninfo: try configuration.requireDatabaseURL(),
                maxConnections: configuration.database.poolSize,
                acquireTimeout: configuration.database.acquireTimeout,
                statementTimeout: configuration.database.statementTimeout,
                plansPreparedOnce: configuration.database.plansPreparedOnce),
            logger: logger)
        hashingPool = HashingPool(maxConcurrent: configuration.accounts.hashConcurrency, queueTimeout: configuration.accounts.hashQueueTimeout)
        hashingPool.start()
        migrator = try configuration.migrator()
        let accounts = configuration.accounts
        tokenCache = AccessTokenCache(
            settings: .init(
                capacity: accounts.tokenCacheEntries, pollInterval: accounts.tokenCachePollInterval, maxAge: accounts.tokenCacheMaxAge,
                revocationMemory: .seconds(accounts.accessTokenLifetime + 300)))
        shares = FairShares(configuration: configuration)
        events = EventHub(
            pool: pool, perUser: configuration.events.streamsPerUser, perProcess: configuration.events.streamsPerProcess,
            heartbeat: configuration.events.heartbeat, pollInterval: configuration.events.pollInterval,
            readyTimeout: configuration.events.readyTimeout, logger: logger)
        tenants = TenantStore(canMail: configuration.identity.dataKey != nil)
        sessions = SessionStore(
            accessTokenLifetime: configuration.accounts.accessTokenLifetime,
            refreshTokenLifetime: configuration.accounts.refreshTokenLifetime,
            refreshGraceSeconds: configuration.accounts.refreshGraceSeconds,
            signer: AccessTokenSigner(keys: accounts.accessTokenKeys ?? [Self.ephemeralKey(logger: logger)]))
        let dummy = try await hashingPool.hash(password: Tokens.randomToken(prefix: "dummy_"), parameters: configuration.accounts.scrypt)
        hashing = PasswordHashing(pool: hashingPool, parameters: configuration.accounts.scrypt, shares: shares, dummyHash: dummy)
        login = LoginService(
            pool: pool,
            throttle: LoginThrottle(
                failuresPerPair: configuration.accounts.loginFailuresPerUser,
                failuresPerAccount: configuration.accounts.loginFailuresPerAccount,
                failuresPerAddress: configuration.accounts.loginFailuresPerAddress),
            users: users, hashing: hashing)
        // AsyncHTTPClient's shared client: it lives as long as the process, as the caches do.
        let http = HTTPClient.shared
        identities = IdentityService(
            pool: pool, store: IdentityStore(settings: configuration.identity),
            verifier: IDTokenVerifier(keys: ProviderKeyCache(client: http, settings: configuration.identity)),
            apple: AppleAccountClient(client: http, settings: configuration.identity),
            secrets: try configuration.identity.dataKey.map(SecretBox.init(key:)))
        // Mail needs the data key: it seals the outbox's messages and keys the codes.
        let mailTenants = TenantMailStore(settings: configuration.mail)
        let outbox = try configuration.identity.dataKey.map { MailOutbox(secrets: try SecretBox(key: $0)) }
        mailSender = MailSender(
            pool: pool, outbox: outbox, tenants: mailTenants,
            clock: configuration.clock, settings: configuration.mail, logger: logger)
        accountMail = AccountMail(
            codes: configuration.identity.dataKey.map { AccountCodes(key: $0) }, outbox: outbox, tenants: mailTenants,
            templates: MailTemplates(), limits: MailLimits(perRecipient: configuration.mail.perRecipient, perAddress: configuration.mail.perAddress),
            clock: configuration.clock, sender: mailSender)
        let push = configuration.push
        var apns = APNsClient.Configuration()
        apns.productionURL = push.apnsProductionURL
        apns.sandboxURL = push.apnsSandboxURL
        apns.caFile = push.apnsCAFile.isEmpty ? nil : push.apnsCAFile
        apns.timeout = push.apnsTimeout
        pushSender = PushSender(
            pool: pool, credentials: try configuration.identity.dataKey.map { TenantAPNsStore(secrets: try SecretBox(key: $0)) },
            apns: APNsClient(configuration: apns), clock: configuration.clock, settings: push, logger: logger)
        resets = PasswordResetService(pool: pool, users: users, sessions: sessions, hashing: hashing, mail: accountMail, tokenCache: tokenCache)
        let photos = configuration.photos
        photoWorkers = PhotoWorkers(count: photos.workers)
        photoSanitiser = PhotoSanitiser(
            limits: .init(maxBytes: photos.maxBytes, maxPixels: photos.maxPixels),
            sandbox: PhotoSandbox(
                isolation: photos.isolation,
                limits: .init(memoryBytes: photos.workerMemoryMB << 20, cpuSeconds: max(1, Int(photos.timeout.components.seconds)), wallClock: photos.timeout)),
            workDirectory: photos.workDirectory, workers: photoWorkers)
        do {
            try await photoSanitiser.checkSandbox()
        } catch {
            // Not fatal: everything but photo uploads works, and they answer 503 until fixed.
            logger.error(
                "photo workers cannot run: uploads will fail with 503 (install libvips-tools and bubblewrap, or set LR_PHOTO_SANDBOX=limits-only where user namespaces are not allowed)",
                metadata: ["error": "\(error)"])
        }
    }
}

extension AppParts {
    /// Without `LR_ACCESS_TOKEN_KEYS`, a key of this process alone (id 0, which no setting
    /// uses): its tokens verify here, and every other replica looks them up.
    static func ephemeralKey(logger: Logger) -> AccessTokenKey {
        logger.notice("LR_ACCESS_TOKEN_KEYS is not set: access tokens are signed with a key of this process, and other replicas look them up")
        return AccessTokenKey(id: 0, secret: Tokens.randomBytes(count: 32))
    }
}

/// Runs the photo workers' threads for the life of the application.
struct PhotoWorkersService: Service {
    let workers: PhotoWorkers

    func run() async throws {
        try? await gracefulShutdown()
        try await workers.shutdown()
    }
}

/// Runs the hashing pool's threads for the life of the application.
struct HashingPoolService: Service {
    let pool: HashingPool

    func run() async throws {
        try? await gracefulShutdown()
        try await pool.shutdown()
    }
}
