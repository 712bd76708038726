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
    // The common-password list is a resource file: a replica installed without it stops
    // here, as it starts, not at its first signup.
    CommonPasswords.load()
    return buildApplication(try await AppParts(configuration: configuration, logger: logger), logger: logger, registry: registry)
}

/// The application over parts already made: for tests that watch a part as it runs.
func buildApplication(
    _ parts: AppParts, logger: Logger, registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()
) -> some ApplicationProtocol {
    let configuration = parts.configuration
    let router = buildRouter(parts, registry: registry)
    return Application(
        router: router,
        // Tells a request in progress that its client went away (RequestDeadlineMiddleware).
        server: .http1(configuration: .init(additionalChannelHandlers: [ClientHangup()])),
        configuration: .init(address: .hostname(configuration.server.host, port: configuration.server.port), serverName: nil),
        services: [
            parts.pool, HashingPoolService(pool: parts.hashingPool), PhotoWorkersService(workers: parts.photoWorkers), parts.events,
            RetentionService(
                pool: parts.pool, interval: configuration.operations.retentionInterval, logger: logger,
                accessTokenLifetime: configuration.accounts.accessTokenLifetime),
            NoteGridFolder(pool: parts.pool, interval: configuration.operations.gridFoldInterval, logger: logger),
            parts.mailSender, parts.pushSender, parts.resets,
            AccessTokenCachePoller(cache: parts.tokenCache, tokens: parts.tokens, pool: parts.pool, logger: logger),
        ],
        logger: logger)
}

func buildRouter(_ parts: AppParts, registry: PrometheusCollectorRegistry) -> Router<AppRequestContext> {
    let configuration = parts.configuration
    let router = Router(context: AppRequestContext.self)
    // Outermost first: metrics see the final status; the request id and client address are
    // known to everything inside; the access log sees the problem a failure became.
    router.add(middleware: MetricsMiddleware())
    router.add(middleware: RequestIDMiddleware())
    router.add(middleware: ClientAddressMiddleware(trustedProxies: configuration.server.trustedProxies))
    router.add(middleware: AccessLogMiddleware())
    // Outside the problems, so a refused call still tells an allowed page why.
    router.add(middleware: CORSMiddleware(origins: TenantOrigins(pool: parts.pool)))
    router.add(middleware: ProblemMiddleware())
    router.add(middleware: RequestDeadlineMiddleware(timeout: configuration.server.requestTimeout))
    // The browser app's files take no share of the database.
    router.add(middleware: WebAppMiddleware(settings: configuration.web))
    router.add(middleware: FairShareMiddleware(shares: parts.shares))

    OperationsController(
        pool: parts.pool, migrator: parts.migrator, hashing: parts.hashingPool, events: parts.events, registry: registry,
        photoWorkers: parts.photoWorkers, shares: parts.shares
    ).register(on: router)
    OpenAPIController(path: configuration.server.openAPIPath).register(on: router)
    WebAppController(settings: configuration.web).register(on: router)
    AppSiteAssociation(pool: parts.pool).register(on: router)

    let limit = configuration.server.bodyLimitBytes
    let accounts = AccountService(
        pool: parts.pool, tenants: parts.tenants, users: parts.users, sessions: parts.sessions, login: parts.login,
        hashing: parts.hashing, identities: parts.identities, mail: parts.accountMail, tokenCache: parts.tokenCache)
    let authenticator = Authenticator(pool: parts.pool, tokens: parts.tokens, signer: parts.sessions.signer, cache: parts.tokenCache)
    let recovery = RecoveryController(
        verification: EmailVerificationService(pool: parts.pool, users: parts.users, mail: parts.accountMail), resets: parts.resets,
        accounts: accounts, authenticator: authenticator, bodyLimit: limit)
    let auth = AuthController(accounts: accounts, bodyLimit: limit)
    let identities = IdentityController(
        signIns: SignInService(accounts: accounts, guestsPerAddressPerHour: configuration.identity.guestsPerAddressPerHour), bodyLimit: limit)
    let users = UsersController(accounts: accounts, export: AccountExport(pool: parts.pool, pageSize: configuration.accounts.exportPageSize), bodyLimit: limit)
    let notes = NotesController(notes: NoteService(pool: parts.pool, notes: parts.notes, creates: IdempotentCreates(pool: parts.pool), writeRules: parts.writeRules), bodyLimit: limit)
    let places = PlacesController(places: PlaceService(pool: parts.pool, places: parts.places, writeRules: parts.writeRules), bodyLimit: limit)
    let tickets = StreamTicketService(pool: parts.pool, lifetime: configuration.events.ticketLifetime, tokens: parts.tokens)
    let events = EventsController(
        pool: parts.pool, hub: parts.events, log: EventLog(notes: parts.notes, places: parts.places, tokens: parts.tokens),
        limits: .init(
            replayMax: configuration.events.replayMax, replayPerSecond: configuration.events.replayRate,
            writeTimeout: configuration.events.writeTimeout))
    let streamTickets = StreamTicketController(tickets: tickets)
    let blocks = BlocksController(blocks: BlockService(pool: parts.pool, blocks: BlockStore(), limit: configuration.safety.blocksPerUser))
    let reports = ReportsController(
        reports: ReportService(
            pool: parts.pool, reports: ReportStore(), perUserPerHour: configuration.safety.reportsPerUserPerHour,
            perTenantPerHour: configuration.safety.reportsPerTenantPerHour),
        bodyLimit: limit)
    let photos = PhotosController(
        photos: PhotoService(
            pool: parts.pool, photos: PhotoStore(), sanitiser: parts.photoSanitiser, creates: IdempotentCreates(pool: parts.pool),
            shares: parts.shares,
            limits: .init(
                perNote: configuration.photos.perNote, bytesPerUser: configuration.photos.bytesPerUser,
                bytesPerTenant: configuration.photos.bytesPerTenant)),
        maxBytes: configuration.photos.maxBytes, shares: parts.shares)
    let push = configuration.push
    let devices = DevicesController(devices: DeviceService(pool: parts.pool, devices: DeviceStore(), limit: push.devicesPerUser), bodyLimit: limit)
    let watches = WatchesController(
        watches: WatchService(
            pool: parts.pool, watches: WatchStore(), rules: WatchRules(radius: push.watchRadiusMin...push.watchRadiusMax), limit: push.watchesPerUser),
        bodyLimit: limit)
    let moderation = ModerationController(moderation: ModerationService(pool: parts.pool, moderation: ModerationStore(), tokenCache: parts.tokenCache), bodyLimit: limit)

    let v1 = router.group("v1")
    v1.addRoutes(auth.endpoints, atPath: "auth")
    TenantsController(pool: parts.pool, tenants: parts.tenants).register(on: v1)
    v1.addRoutes(identities.signInEndpoints, atPath: "auth")
    v1.addRoutes(recovery.passwordEndpoints, atPath: "auth/password")
    v1.addRoutes(recovery.linkEndpoints, atPath: "me/email")
    let authenticated = v1.group().add(middleware: authenticator)
        .add(middleware: FairShareMiddleware(shares: parts.shares))
    authenticated.addRoutes(auth.authenticatedEndpoints, atPath: "auth")
    authenticated.addRoutes(users.meEndpoints, atPath: "me")
    authenticated.addRoutes(recovery.authenticatedEndpoints, atPath: "me/email")
    authenticated.addRoutes(identities.identityEndpoints, atPath: "me/identities")
    authenticated.addRoutes(blocks.endpoints, atPath: "me/blocks")
    authenticated.addRoutes(devices.endpoints, atPath: "me/devices")
    authenticated.addRoutes(watches.endpoints, atPath: "me/watches")
    authenticated.addRoutes(reports.myEndpoints, atPath: "me/reports")
    authenticated.addRoutes(reports.endpoints, atPath: "reports")
    authenticated.addRoutes(moderation.endpoints, atPath: "moderation")
    authenticated.addRoutes(users.userEndpoints, atPath: "users")
    authenticated.addRoutes(places.endpoints, atPath: "places")
    authenticated.addRoutes(photos.placeEndpoints, atPath: "places")
    authenticated.addRoutes(streamTickets.endpoints, atPath: "events/tickets")
    // The stream alone also opens with a stream ticket, for browsers' EventSource.
    v1.group().add(middleware: Authenticator(pool: parts.pool, tokens: parts.tokens, signer: parts.sessions.signer, cache: parts.tokenCache, streamTickets: tickets))
        .add(middleware: FairShareMiddleware(shares: parts.shares))
        .addRoutes(events.endpoints, atPath: "events")
    authenticated.addRoutes(notes.endpoints, atPath: "notes")
    authenticated.addRoutes(photos.noteEndpoints, atPath: "notes")
    authenticated.addRoutes(photos.endpoints, atPath: "photos")
    authenticated.addRoutes(notes.userEndpoints, atPath: "users")
    return router
}
