import Credentials
import Logging
import Photos

/// Every `LR_*` variable the service reads, by concern, in the order `.env.example` and
/// the operations guide list them. Adding a setting: a field with its default in
/// `AppConfiguration.swift` and one declaration here; `landmark-remark settings` then
/// prints the new `.env.example` and table (a test fails until both are updated).
extension AppConfiguration {
    static var settingGroups: [SettingGroup] {
        [
            SettingGroup(title: "Server", settings: [
                .text("LR_HOST", \.server.host, allowed: "an address", help: "The address to listen on."),
                .integer("LR_PORT", \.server.port, 1...65535, help: "The port to listen on."),
                .integer("LR_BODY_LIMIT_BYTES", \.server.bodyLimitBytes, 1024...(16 << 20), help: """
                    Request bodies over this many bytes get 413 (keep nginx's client_max_body_size in step).
                    """),
                .duration("LR_REQUEST_TIMEOUT_MS", \.server.requestTimeout, .milliseconds, 10...600_000, help: """
                    A request still running after this long, or whose client went away, is cancelled with its \
                    statement (503 unavailable). Event streams are bounded only while opening. Keep it above \
                    LR_DB_STATEMENT_TIMEOUT_MS.
                    """),
                Setting("LR_TRUSTED_PROXIES", allowed: "addresses or CIDR ranges, comma-separated", example: "", help: """
                    Proxies whose X-Forwarded-For is believed. Empty: the client address is the TCP peer.
                    """) { text, configuration in
                    guard let proxies = TrustedProxies(list: text) else {
                        throw ConfigurationError(variable: "LR_TRUSTED_PROXIES", message: "must be a comma-separated list of IP addresses or CIDR ranges")
                    }
                    configuration.server.trustedProxies = proxies
                },
                Setting("LR_LOG_LEVEL", allowed: "trace, debug, info, notice, warning, error, critical", example: "info", help: """
                    How much the service logs (one line per request at info).
                    """) { text, configuration in
                    guard let level = Logger.Level(rawValue: text) else {
                        throw ConfigurationError(variable: "LR_LOG_LEVEL", message: "must be one of trace, debug, info, notice, warning, error, critical")
                    }
                    configuration.server.logLevel = level
                },
                .text("LR_OPENAPI_PATH", \.server.openAPIPath, allowed: "a file", help: """
                    The OpenAPI document served at /v1/openapi.json, read once at start (relative to the working directory).
                    """),
                .duration("LR_SHUTDOWN_TIMEOUT_SECONDS", \.server.shutdownTimeout, .seconds, 1...3600, help: """
                    How long serve lets requests in flight finish after SIGTERM or SIGINT (it stops accepting \
                    connections at once); past this, what still runs is cut off and it exits.
                    """),
            ]),
            SettingGroup(title: "Database", settings: [
                .text(
                    "LR_DATABASE_URL", \.database.url, allowed: "a postgres:// URL or key=value conninfo",
                    example: "postgresql://landmark_app:CHANGE_ME@127.0.0.1:5432/landmark_remark", help: """
                    Required by serve. The service connects as landmark_app, which owns no table and cannot \
                    bypass row-level security.
                    """),
                .text(
                    "LR_MIGRATE_DATABASE_URL", \.database.migrateURL, allowed: "a postgres:// URL or key=value conninfo",
                    example: "postgresql://landmark_owner:CHANGE_ME@127.0.0.1:5432/landmark_remark", help: """
                    Migrations and the admin commands run as the owner role (empty: LR_DATABASE_URL).
                    """),
                .text("LR_MIGRATIONS_DIR", \.database.migrationsDirectory, allowed: "a directory", help: """
                    The SQL files migrate applies and /readyz compares with the database.
                    """),
                .integer("LR_DB_POOL_SIZE", \.database.poolSize, 1...500, help: "Connections each replica opens at most."),
                .duration("LR_DB_ACQUIRE_TIMEOUT_MS", \.database.acquireTimeout, .milliseconds, 1...600_000, help: """
                    How long a request waits for a connection before 503.
                    """),
                .duration("LR_DB_STATEMENT_TIMEOUT_MS", \.database.statementTimeout, .milliseconds, 10...600_000, help: """
                    The server ends any statement of the service's pool that runs longer than this (503 \
                    unavailable); set with each transaction, so it holds through PgBouncer too.
                    """),
                .boolean("LR_DB_PLAN_ONCE", \.database.plansPreparedOnce, help: """
                    Plan the service's prepared statements once, for every value (plan_cache_mode = \
                    force_generic_plan with each transaction), instead of PostgreSQL's choice, which can plan \
                    a large one on every run. Never applied where the database has Citus, which cannot route \
                    such a plan.
                    """),
            ]),
            SettingGroup(title: "Accounts", settings: [
                .integer("LR_ACCESS_TOKEN_TTL_SECONDS", \.accounts.accessTokenLifetime, 1...(7 * 86400), help: "How long an access token lives."),
                Setting("LR_ACCESS_TOKEN_KEYS", allowed: "id:key, comma-separated", example: "", help: """
                    Keys that sign access tokens, so that every replica verifies them without the database: \
                    `id:key` pairs, an id from 1 to 255 and 32 random bytes in base64 (openssl rand -base64 32). \
                    The first signs, all verify. To rotate, put a new key first and keep the old one second \
                    for an access token's lifetime. Unset: each replica signs with a key of its own, and the \
                    others look its tokens up.
                    """) { text, configuration in
                    configuration.accounts.accessTokenKeys = try AccessTokenKey.list(text)
                },
                .integer("LR_REFRESH_TOKEN_TTL_SECONDS", \.accounts.refreshTokenLifetime, 60...(365 * 86400), help: """
                    How long a session lasts unused (each refresh renews it).
                    """),
                .integer("LR_REFRESH_GRACE_SECONDS", \.accounts.refreshGraceSeconds, 0...300, help: """
                    The window in which a just-rotated refresh token may be retried.
                    """),
                .integer("LR_TOKEN_CACHE_ENTRIES", \.accounts.tokenCacheEntries, 0...10_000_000, help: """
                    Access tokens each replica keeps once looked up, so that their requests make no round \
                    trip for the token; 0 looks every token up.
                    """),
                .duration("LR_TOKEN_CACHE_POLL_INTERVAL_MS", \.accounts.tokenCachePollInterval, .milliseconds, 10...1000, help: """
                    How often each replica reads the revocation epochs of the tenants it keeps tokens of.
                    """),
                .duration("LR_TOKEN_CACHE_MAX_AGE_MS", \.accounts.tokenCacheMaxAge, .milliseconds, 20...1000, help: """
                    A kept token is used only if the replica read its tenant's epoch (or the token) less \
                    than this ago: the longest a logout or a disabled account elsewhere goes unseen. Keep \
                    it above twice the poll interval, or tokens are looked up between polls.
                    """),
                .integer("LR_SCRYPT_LOG_N", \.accounts.scrypt.logN, 1...ScryptParameters.maximumLogN, help: """
                    scrypt cost: N = 2^LOG_N. The defaults are the OWASP minimum (about 128 MiB and 0.85 s per \
                    hash on our 2-core machine). Raising them upgrades hashes at next login.
                    """),
                .integer("LR_SCRYPT_R", \.accounts.scrypt.r, 1...ScryptParameters.maximumR, help: "scrypt's block size."),
                .integer("LR_SCRYPT_P", \.accounts.scrypt.p, 1...ScryptParameters.maximumP, help: "scrypt's parallelism."),
                Setting("LR_HASH_CONCURRENCY", allowed: "1 to 256", example: "", help: """
                    How many hashes run at once (empty: the machine's cores).
                    """) { text, configuration in
                    configuration.accounts.hashConcurrency = try Setting.whole(text, "LR_HASH_CONCURRENCY", 1...256)
                },
                .duration("LR_HASH_QUEUE_TIMEOUT_MS", \.accounts.hashQueueTimeout, .milliseconds, 1...600_000, help: """
                    How long a login may queue for hashing before 503.
                    """),
                .integer("LR_LOGIN_FAILURES_PER_USER", \.accounts.loginFailuresPerUser, 1...1000, help: """
                    Failed password checks before 429 (15-minute window, then blocks of 15 s doubling to 15 \
                    min) for one account from one client address.
                    """),
                .integer("LR_LOGIN_FAILURES_PER_ADDRESS", \.accounts.loginFailuresPerAddress, 1...100_000, help: """
                    The same from one client address, whatever it tries.
                    """),
                .integer("LR_LOGIN_FAILURES_PER_ACCOUNT", \.accounts.loginFailuresPerAccount, 1...1_000_000, help: """
                    Failed password checks for one account from all the addresses it has not logged in from in \
                    the last 30 days, before those get 429; its owner's usual addresses are not blocked by it.
                    """),
            ]),
            SettingGroup(title: "Sign-in providers and guests", settings: [
                Setting("LR_DATA_KEY", allowed: "32 random bytes in base64", example: "", help: """
                    Seals Apple's refresh tokens and the mail outbox's messages at rest, and keys emailed \
                    codes (openssl rand -base64 32); without it Apple authorization codes are not exchanged \
                    (Apple tokens cannot be revoked when an account is deleted) and no mail is sent. Keep it \
                    with your secrets: losing it voids those tokens and the codes and messages in flight.
                    """) { text, configuration in
                    guard let bytes = Setting.base64(text), bytes.count == 32 else {
                        throw ConfigurationError(variable: "LR_DATA_KEY", message: "must be 32 random bytes in base64 (openssl rand -base64 32)")
                    }
                    configuration.identity.dataKey = bytes
                },
                .boolean("LR_IDENTITY_ALLOW_LOOPBACK", \.identity.allowLoopbackKeyURLs, help: """
                    Lets providers' key URLs (and Apple's endpoints) be plain http to 127.0.0.1, localhost or \
                    [::1]: for tests and the README's walkthrough only, never in production.
                    """),
                .integer("LR_GUESTS_PER_ADDRESS_PER_HOUR", \.identity.guestsPerAddressPerHour, 1...100_000, help: """
                    Guest accounts (POST /v1/auth/guest) one client address may make per tenant per hour.
                    """),
            ]),
            SettingGroup(title: "Safety", settings: [
                .integer("LR_BLOCKS_PER_USER", \.safety.blocksPerUser, 1...100_000, help: """
                    Users one user may block (PUT /v1/me/blocks/{username}); 422 too_many_blocks beyond.
                    """),
                .integer("LR_REPORTS_PER_USER_PER_HOUR", \.safety.reportsPerUserPerHour, 1...100_000, help: """
                    Reports (POST /v1/reports) one user may make in an hour; 429 beyond.
                    """),
                .integer("LR_REPORTS_PER_TENANT_PER_HOUR", \.safety.reportsPerTenantPerHour, 1...10_000_000, help: """
                    Reports one tenant may receive in an hour from all its users, against floods; 429 beyond.
                    """),
            ]),
            SettingGroup(title: "Push", settings: [
                .integer("LR_DEVICES_PER_USER", \.push.devicesPerUser, 1...100, help: """
                    Devices one user may register for pushes (PUT /v1/me/devices/{token}); registering one \
                    more drops the one registered longest ago.
                    """),
                .integer("LR_WATCHES_PER_USER", \.push.watchesPerUser, 1...1000, help: """
                    Areas one user may watch for new notes (POST /v1/me/watches); 422 too_many_watches beyond.
                    """),
                .integer("LR_WATCH_RADIUS_MIN_M", \.push.watchRadiusMin, 1...1_000_000, help: """
                    The smallest radius of a watch, in metres.
                    """),
                .integer("LR_WATCH_RADIUS_MAX_M", \.push.watchRadiusMax, 1...1_000_000, help: """
                    The largest radius of a watch, in metres (at least LR_WATCH_RADIUS_MIN_M).
                    """),
                .boolean("LR_PUSH_SENDER", \.push.senderEnabled, help: """
                    Whether this replica sends pushes to APNs (every replica may: each push is sent by one). \
                    Each tenant's APNs key is its own setting (landmark-remark tenant apns, or SELECT \
                    admin.set_tenant_apns(…)), sealed with LR_DATA_KEY, which sending needs.
                    """),
                .duration("LR_PUSH_POLL_INTERVAL_MS", \.push.pollInterval, .milliseconds, 10...600_000, help: """
                    How often an idle sender looks for new matches to push.
                    """),
                .integer("LR_PUSH_PER_USER_PER_HOUR", \.push.perUserPerHour, 1...100, help: """
                    Pushes one user gets in an hour; more matches in the hour wait, then go as one summary \
                    ("5 new notes near Home").
                    """),
                .text("LR_APNS_PRODUCTION_URL", \.push.apnsProductionURL, allowed: "an https URL", help: """
                    APNs's production endpoint (Apple's unless you test against a fake).
                    """),
                .text("LR_APNS_SANDBOX_URL", \.push.apnsSandboxURL, allowed: "an https URL", help: """
                    APNs's sandbox endpoint, for development builds' device tokens.
                    """),
                .text("LR_APNS_CA_FILE", \.push.apnsCAFile, allowed: "a PEM file, or empty", help: """
                    Certificate authorities to trust for APNs instead of the system's (a test's fake APNs); \
                    empty: the system's.
                    """),
                .duration("LR_APNS_TIMEOUT_MS", \.push.apnsTimeout, .milliseconds, 100...120_000, help: """
                    The longest one push may take, connecting included; a silent APNs rests the tenant's \
                    pushes (5 s, doubling up to 5 minutes).
                    """),
            ]),
            SettingGroup(title: "Mail", settings: [
                .boolean("LR_MAIL_SENDER", \.mail.senderEnabled, help: """
                    Whether this replica delivers mail from the outbox (every replica may: each message is \
                    sent by one). Each tenant's relay is its own setting (SELECT admin.set_tenant_mail(…)); \
                    mail also needs LR_DATA_KEY, which seals messages and keys their codes.
                    """),
                .duration("LR_MAIL_POLL_INTERVAL_MS", \.mail.pollInterval, .milliseconds, 10...600_000, help: """
                    How often an idle sender looks for mail made by other replicas; mail made on this one \
                    wakes it at once.
                    """),
                .text("LR_SMTP_CA_FILE", \.mail.caFile, allowed: "a PEM file, or empty", help: """
                    Certificate authorities to trust for the relays' TLS instead of the system's (a private \
                    relay's CA); empty: the system's.
                    """),
                .duration("LR_MAIL_RELAY_BACKOFF_MAX_SECONDS", \.mail.relayBackoffCap, .seconds, 1...3600, help: """
                    The longest a tenant's mail waits, in order, before a relay that could not be reached or \
                    refused the login is tried again (5 s, doubling).
                    """),
                .integer("LR_MAIL_PER_RECIPIENT", \.mail.perRecipient, 1...1000, help: """
                    Messages to one address per 15 minutes (codes and links); 429 beyond, and a reset \
                    request past it sends nothing.
                    """),
                .integer("LR_MAIL_PER_ADDRESS", \.mail.perAddress, 1...100_000, help: """
                    Requests that send mail (verification, reset) from one client address per tenant per hour; \
                    429 beyond.
                    """),
            ]),
            SettingGroup(title: "Photos", settings: [
                .integer("LR_PHOTO_MAX_BYTES", \.photos.maxBytes, 1024...100_000_000, help: """
                    The largest photo upload, in bytes; 413 beyond (nginx's limit for the photo paths \
                    must be at least this).
                    """),
                .integer("LR_PHOTO_MAX_PIXELS", \.photos.maxPixels, 1...500_000_000, help: """
                    The most pixels a photo's header may declare; 422 beyond, before anything is decoded.
                    """),
                .integer("LR_PHOTOS_PER_NOTE", \.photos.perNote, 1...100, help: "Photos one note may have; 422 beyond."),
                .integer("LR_PHOTO_BYTES_PER_USER", \.photos.bytesPerUser, 1_000_000...1_000_000_000_000, help: """
                    Bytes of photos (their stored variants) one user may keep; an upload past it is 413 \
                    photo_quota_exceeded.
                    """),
                .integer("LR_PHOTO_BYTES_PER_TENANT", \.photos.bytesPerTenant, 1_000_000...1_000_000_000_000_000, help: """
                    Bytes of photos one tenant may keep, all its users together; 413 photo_quota_exceeded \
                    beyond (admin.photo_usage() shows each tenant's).
                    """),
                .integer("LR_PHOTO_WORKERS", \.photos.workers, 1...64, help: """
                    Photos decoded at once on this replica, each by a sandboxed worker process; more \
                    uploads wait their turn, in their fair share.
                    """),
                Setting("LR_PHOTO_SANDBOX", allowed: "bubblewrap or limits-only", example: "bubblewrap", help: """
                    bubblewrap: each worker in namespaces of its own (no network, /usr read-only, its job's \
                    directory only) and its limits; limits-only: the limits alone, where user namespaces \
                    are not allowed (a container that is itself the boundary).
                    """) { text, configuration in
                    guard let isolation = PhotoSandbox.Isolation(rawValue: text) else {
                        throw ConfigurationError(variable: "LR_PHOTO_SANDBOX", message: "must be bubblewrap or limits-only")
                    }
                    configuration.photos.isolation = isolation
                },
                .integer("LR_PHOTO_UPLOADS_PER_USER", \.photos.uploadsPerUser, 1...64, help: """
                    Photo uploads one user may have in flight at once (bodies being read or waiting for \
                    a worker); more wait up to LR_SHARE_QUEUE_TIMEOUT_MS, then 429.
                    """),
                .integer("LR_PHOTO_UPLOADS_IN_FLIGHT", \.photos.uploadsInFlight, 1...10_000, help: """
                    Photo uploads this replica holds at once, everyone's together: with LR_PHOTO_MAX_BYTES, \
                    the most memory uploads' bodies take; more wait, then 429.
                    """),
                .text("LR_PHOTO_WORK_DIR", \.photos.workDirectory, allowed: "a directory", help: """
                    Where each upload's private job directory is made, and removed after it.
                    """),
                .duration("LR_PHOTO_TIMEOUT_SECONDS", \.photos.timeout, .seconds, 1...600, help: """
                    A worker still running after this long is killed; its upload gets 422.
                    """),
                .integer("LR_PHOTO_WORKER_MEMORY_MB", \.photos.workerMemoryMB, 64...65536, help: """
                    A worker's address space; a decoder that needs more fails its upload (422).
                    """),
            ]),
            SettingGroup(title: "Event streams", settings: [
                .integer("LR_EVENTS_MAX_STREAMS_PER_USER", \.events.streamsPerUser, 1...1000, help: """
                    Open streams (GET /v1/events) per user; 429 beyond.
                    """),
                .integer("LR_EVENTS_MAX_STREAMS", \.events.streamsPerProcess, 1...100_000, help: "Open streams per replica; 429 beyond."),
                .duration("LR_EVENTS_HEARTBEAT_SECONDS", \.events.heartbeat, .seconds, 1...300, help: """
                    The keep-alive comment interval, which also bounds how long a stream outlives its revoked \
                    session, expired token, or disabled user or tenant.
                    """),
                .duration("LR_EVENTS_WRITE_TIMEOUT_SECONDS", \.events.writeTimeout, .seconds, 1...3600, help: """
                    A stream whose client has not read one write for this long is closed (the client resumes \
                    with Last-Event-ID); it bounds what one stalled client holds.
                    """),
                .duration("LR_EVENTS_POLL_INTERVAL_MS", \.events.pollInterval, .milliseconds, 10...10_000, help: """
                    How often each replica reads the event log's horizon (one index probe): the most an event \
                    waits before streams hear of it.
                    """),
                .integer("LR_EVENTS_REPLAY_MAX", \.events.replayMax, 100...1_000_000, help: """
                    A resume (Last-Event-ID) that would replay more than this many of the tenant's events gets \
                    a reset event instead.
                    """),
                .integer("LR_EVENTS_REPLAY_PER_SECOND", \.events.replayRate, 10...1_000_000, help: """
                    Events a stream sends per second on average (bursts of 1,000), so no one client pulls the \
                    log at full speed.
                    """),
                .integer("LR_EVENT_TICKET_TTL_SECONDS", \.events.ticketLifetime, 5...300, help: """
                    How long a stream ticket (POST /v1/events/tickets) may wait to be used.
                    """),
            ]),
            SettingGroup(title: "Fair shares", settings: [
                .integer("LR_DB_SHARE_PER_USER_PERCENT", \.shares.databasePerUserPercent, 1...100, help: """
                    The most of the database pool one user may hold at once (percent of LR_DB_POOL_SIZE, at \
                    least one connection).
                    """),
                .integer("LR_DB_SHARE_PER_TENANT_PERCENT", \.shares.databasePerTenantPercent, 1...100, help: """
                    The same for one tenant.
                    """),
                .integer("LR_HASH_SHARE_PER_ADDRESS", \.shares.hashingPerAddress, 1...256, help: """
                    Password hashing slots one client address may hold at once.
                    """),
                .integer("LR_HASH_SHARE_PER_TENANT_PERCENT", \.shares.hashingPerTenantPercent, 1...100, help: """
                    The most of password hashing one tenant may hold (percent of LR_HASH_CONCURRENCY, at least one).
                    """),
                .duration("LR_SHARE_QUEUE_TIMEOUT_MS", \.shares.queueTimeout, .milliseconds, 1...600_000, help: """
                    How long a caller past its share waits before 429.
                    """),
            ]),
            SettingGroup(title: "Browser app", settings: [
                Setting("LR_WEB_DIR", allowed: "a directory, or empty", example: AppConfiguration().web.directory, emptyIsDefault: false, help: """
                    The app's files (the repository's web/); empty: no app at /. The image sets it.
                    """) { text, configuration in configuration.web.directory = text },
                .text("LR_WEB_LEAFLET_DIR", \.web.leafletDirectory, allowed: "a directory", help: """
                    Debian's Leaflet (libjs-leaflet), served at /vendor/leaflet/.
                    """),
                .text("LR_WEB_TENANT", \.web.tenant, allowed: "a tenant's slug", help: """
                    The tenant the app signs in to (empty: its sign-in form asks).
                    """),
                Setting("LR_MAP_TILE_URL", allowed: "an http(s) URL template, or none", example: AppConfiguration().web.tileURL, help: """
                    The map's tiles, a Leaflet URL template (none: no tiles). The app's \
                    Content-Security-Policy allows images from the template's host; nginx's copy of that \
                    policy names LR_NGINX_TILE_SOURCE: change both together.
                    """) { text, configuration in
                    // Its host goes into the Content-Security-Policy: nothing that could end a directive.
                    guard text == "none" || ((text.hasPrefix("https://") || text.hasPrefix("http://"))
                        && !text.contains(where: { $0 == ";" || $0 == "," || $0 == "'" || $0 == "\"" || $0.isWhitespace })) else {
                        throw ConfigurationError(
                            variable: "LR_MAP_TILE_URL",
                            message: "must be an http(s) URL template like https://tile.openstreetmap.org/{z}/{x}/{y}.png, or none")
                    }
                    configuration.web.tileURL = text == "none" ? "" : text
                },
                .text("LR_MAP_TILE_ATTRIBUTION", \.web.tileAttribution, allowed: "HTML", help: "The tiles' attribution."),
                Setting("LR_WEB_SIGN_IN_GOOGLE", allowed: "a client id", example: "", help: """
                    A Sign in with Google button: Google's web client id. The tenant must accept the provider \
                    (identity-provider set) with that client id; the app's URL is the redirect URI to register.
                    """) { text, configuration in configuration.web.signIn.append(.google(clientID: text)) },
                Setting("LR_WEB_SIGN_IN_APPLE", allowed: "a Services ID", example: "", help: """
                    A Sign in with Apple button: the Services ID, accepted by the tenant likewise.
                    """) { text, configuration in configuration.web.signIn.append(.apple(clientID: text)) },
                Setting("LR_WEB_SIGN_IN_OIDC", allowed: "oidc:<name> <client id> <authorization URL> [label]", example: "", help: """
                    A button for an OpenID Connect provider, accepted by the tenant likewise.
                    """) { text, configuration in
                    guard let provider = WebSignIn.oidc(text) else {
                        throw ConfigurationError(
                            variable: "LR_WEB_SIGN_IN_OIDC", message: "must be \"oidc:<name> <client id> <authorization URL> [label]\", not \"\(text)\"")
                    }
                    configuration.web.signIn.append(provider)
                },
            ]),
            SettingGroup(title: "Upkeep", settings: [
                .duration("LR_RETENTION_INTERVAL_SECONDS", \.operations.retentionInterval, .seconds, 0...86400, help: """
                    How often each replica purges expired sessions and tokens, spent login counts, old \
                    idempotency keys and events (0: never; then run SELECT admin.purge_expired() yourself).
                    """),
                .duration("LR_GRID_FOLD_INTERVAL_MS", \.operations.gridFoldInterval, .milliseconds, 0...600_000, help: """
                    How often each replica folds the cluster grid's new deltas into its cells (0: never); a \
                    clusters read adds the unfolded ones itself, so this bounds its work, not its truth.
                    """),
            ]),
        ]
    }
}
