import Credentials
import Foundation
import Hummingbird
import Logging
import Postgres
import Prometheus

/// Builds the whole service: pools, stores, middleware and routes. The
/// executable and the tests call this same function, so what is tested is what runs.
public func buildApplication(
    configuration: AppConfiguration,
    logger: Logger,
    registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()
) async throws -> some ApplicationProtocol {
    let services = try await makeServices(configuration: configuration, logger: logger)
    let router = buildRouter(services: services, registry: registry)
    return Application(
        router: router,
        // Tells a request in progress that its client went away (RequestDeadlineMiddleware).
        server: .http1(configuration: .init(additionalChannelHandlers: [ClientHangup()])),
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: nil),
        services: [
            services.pool, HashingPoolService(pool: services.hashing), services.events,
            RetentionService(pool: services.pool, interval: configuration.retentionInterval, logger: logger),
        ],
        logger: logger)
}

func makeServices(configuration: AppConfiguration, logger: Logger) async throws -> AppServices {
    let pool = try PostgresPool(
        configuration: .init(
            conninfo: try configuration.requireDatabaseURL(),
            maxConnections: configuration.poolSize,
            acquireTimeout: configuration.poolAcquireTimeout,
            statementTimeout: configuration.statementTimeout),
        logger: logger)
    let hashing = HashingPool(maxConcurrent: configuration.hashConcurrency, queueTimeout: configuration.hashQueueTimeout)
    hashing.start()
    let migrator = try PostgresMigrator(directory: URL(fileURLWithPath: configuration.migrationsDirectory))
    let dummy = try await hashing.hash(password: Tokens.randomToken(prefix: "dummy_"), parameters: configuration.scrypt)
    let events = EventHub(
        pool: pool, perUser: configuration.eventStreamsPerUser, perProcess: configuration.eventStreamsPerProcess,
        heartbeat: configuration.eventHeartbeat, pollInterval: configuration.eventPollInterval, logger: logger)
    return AppServices(
        configuration: configuration,
        pool: pool,
        hashing: hashing,
        migrator: migrator,
        tenants: TenantStore(pool: pool),
        sessions: SessionStore(
            accessTokenLifetime: configuration.accessTokenLifetime,
            refreshTokenLifetime: configuration.refreshTokenLifetime,
            refreshGraceSeconds: configuration.refreshGraceSeconds),
        throttle: LoginThrottle(
            failuresPerPair: configuration.loginFailuresPerUser,
            failuresPerAccount: configuration.loginFailuresPerAccount,
            failuresPerAddress: configuration.loginFailuresPerAddress),
        dummyPasswordHash: dummy,
        events: events,
        shares: FairShares(configuration: configuration))
}

func buildRouter(services: AppServices, registry: PrometheusCollectorRegistry) -> Router<AppRequestContext> {
    let router = Router(context: AppRequestContext.self)
    // Outermost first: metrics see the final status, after problems are rendered.
    router.add(middleware: MetricsMiddleware())
    router.add(middleware: ProblemMiddleware(trustedProxies: services.configuration.trustedProxies))
    router.add(middleware: RequestDeadlineMiddleware(timeout: services.configuration.requestTimeout))
    router.add(middleware: FairShareMiddleware(shares: services.shares))

    OperationsController(services: services, registry: registry).register(on: router)
    OpenAPIController(path: services.configuration.openAPIPath).register(on: router)

    let auth = AuthController(services: services)
    let users = UsersController(services: services, auth: auth)
    let v1 = router.group("v1")
    v1.addRoutes(auth.endpoints, atPath: "auth")

    let authenticated = v1.group().add(middleware: Authenticator(pool: services.pool))
        .add(middleware: FairShareMiddleware(shares: services.shares))
    authenticated.addRoutes(auth.authenticatedEndpoints, atPath: "auth")
    authenticated.addRoutes(users.meEndpoints, atPath: "me")
    authenticated.addRoutes(users.userEndpoints, atPath: "users")
    authenticated.addRoutes(PlacesController(services: services).endpoints, atPath: "places")
    authenticated.addRoutes(EventsController(pool: services.pool, hub: services.events, configuration: services.configuration).endpoints, atPath: "events")
    let notes = NotesController(services: services)
    authenticated.addRoutes(notes.endpoints, atPath: "notes")
    authenticated.addRoutes(notes.userEndpoints, atPath: "users")
    return router
}
