import Admission
import Hummingbird
import Postgres

/// How much of the database pool and of password hashing one caller may hold at once, so
/// that one user, tenant or client address flooding the service leaves the others served.
///
/// - Database connections: per user and per tenant, held only while a connection is
///   borrowed (`PostgresPool.admission`). Before authentication only the tenant named by
///   `X-Tenant` counts: the client address would put every user behind one proxy (or one
///   NAT) in one share, and what runs before authentication is short (a token lookup, a
///   tenant lookup). An event stream borrows for each short read, outside its request's
///   scope, so it holds no share for its life.
/// - Password hashing: per client address and per tenant.
/// - Photo decoding: one upload at a time per user, and per tenant all workers but one (with
///   one worker, that one), so that one tenant's flood of uploads leaves a worker to the others.
/// - Photo uploads in flight (a body being read, up to 15 MB, or waiting to be decoded): a few
///   per user, and a bound for the replica, taken before the body is read.
///
/// Past its share a caller waits, in arrival order, up to `LR_SHARE_QUEUE_TIMEOUT_MS`, then
/// gets `429 rate_limited` with `Retry-After`.
struct FairShares: Sendable {
    let connectionsPerUser: Int
    let connectionsPerTenant: Int
    let hashesPerAddress: Int
    let hashesPerTenant: Int
    let database: KeyedLimiter<String>
    let hashing: KeyedLimiter<String>
    let photosPerTenant: Int
    let photos: KeyedLimiter<String>
    let uploadsPerUser: Int
    let uploadsInFlight: Int
    let uploads: KeyedLimiter<String>

    init(configuration: AppConfiguration) {
        func share(_ percent: Int, of total: Int) -> Int { max(1, total * percent / 100) }
        connectionsPerUser = share(configuration.shares.databasePerUserPercent, of: configuration.database.poolSize)
        connectionsPerTenant = share(configuration.shares.databasePerTenantPercent, of: configuration.database.poolSize)
        hashesPerAddress = configuration.shares.hashingPerAddress
        hashesPerTenant = share(configuration.shares.hashingPerTenantPercent, of: configuration.accounts.hashConcurrency)
        database = KeyedLimiter(queueTimeout: configuration.shares.queueTimeout)
        hashing = KeyedLimiter(queueTimeout: configuration.shares.queueTimeout)
        photosPerTenant = max(1, configuration.photos.workers - 1)
        photos = KeyedLimiter(queueTimeout: configuration.shares.queueTimeout)
        uploadsPerUser = configuration.photos.uploadsPerUser
        uploadsInFlight = configuration.photos.uploadsInFlight
        uploads = KeyedLimiter(queueTimeout: configuration.shares.queueTimeout)
    }

    /// Who the current request is, for its shares; set by `FairShareMiddleware`.
    struct Claimant: Sendable {
        /// `user:<tenant id>:<user id>`, once authenticated.
        let user: String?
        let address: String
        /// The tenant's slug: the token's, else `X-Tenant` (unchecked: it only names a key).
        let tenant: String?

        init(identity: Identity?, tenantHeader: String?, address: String) {
            user = identity.map { "user:\($0.tenantID):\($0.userID)" }
            self.address = address
            tenant = identity?.tenantSlug ?? tenantHeader.flatMap { $0.isEmpty ? nil : $0 }
        }
    }

    @TaskLocal static var claimant: Claimant?

    func databaseClaims(_ claimant: Claimant) -> [KeyedLimiter<String>.Claim] {
        (claimant.user.map { [.init($0, limit: connectionsPerUser)] } ?? [])
            + (claimant.tenant.map { [.init("tenant:" + $0, limit: connectionsPerTenant)] } ?? [])
    }

    func hashingClaims(_ claimant: Claimant) -> [KeyedLimiter<String>.Claim] {
        [.init("address:" + claimant.address, limit: hashesPerAddress)]
            + (claimant.tenant.map { [.init("tenant:" + $0, limit: hashesPerTenant)] } ?? [])
    }

    /// The pool's admission for `claimant`'s connections.
    func databaseAdmission(for claimant: Claimant) -> PostgresPool.Admission {
        let claims = databaseClaims(claimant)
        return PostgresPool.Admission { [database] in
            try await Self.admit { try await database.acquire(claims) }
            return { database.release(claims) }
        }
    }

    /// Runs a password hash within the current request's hashing share (none outside a request).
    func withHashingShare<T>(_ body: () async throws -> T) async throws -> T {
        guard let claimant = Self.claimant else { return try await body() }
        let claims = hashingClaims(claimant)
        try await Self.admit { try await hashing.acquire(claims) }
        defer { hashing.release(claims) }
        return try await body()
    }

    /// Runs a photo's decoding within the current request's share of the workers.
    func withPhotoShare<T>(_ body: () async throws -> T) async throws -> T {
        guard let claimant = Self.claimant else { return try await body() }
        let claims = (claimant.user.map { [KeyedLimiter<String>.Claim($0, limit: 1)] } ?? [])
            + (claimant.tenant.map { [.init("tenant:" + $0, limit: photosPerTenant)] } ?? [])
        try await Self.admit { try await photos.acquire(claims) }
        defer { photos.release(claims) }
        return try await body()
    }

    /// Photo uploads this replica admitted and has not finished (`withUploadShare`).
    var photoUploadsInFlight: Int { uploads.inFlight("replica") }

    /// Runs a photo upload (reading its body, then the rest) within the current request's
    /// share of uploads in flight and the replica's bound.
    func withUploadShare<T>(_ body: () async throws -> T) async throws -> T {
        guard let claimant = Self.claimant else { return try await body() }
        let claims = (claimant.user.map { [KeyedLimiter<String>.Claim($0, limit: uploadsPerUser)] } ?? [])
            + [.init("replica", limit: uploadsInFlight)]
        try await Self.admit { try await uploads.acquire(claims) }
        defer { uploads.release(claims) }
        return try await body()
    }

    private static func admit(_ acquire: () async throws -> Void) async throws {
        do {
            try await acquire()
        } catch KeyedLimiter<String>.Failure.busy {
            throw AppError.shareExceeded
        } catch KeyedLimiter<String>.Failure.closed {
            throw AppError.unavailable()
        }
    }
}

/// Sets the request's claimant and the database pool's admission for it. Added once for all
/// routes (the client address and `X-Tenant`) and again behind `Authenticator` (the user).
struct FairShareMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext

    let shares: FairShares

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let claimant = FairShares.Claimant(
            identity: context.identity, tenantHeader: request.headers[.xTenant], address: context.clientAddress)
        return try await FairShares.$claimant.withValue(claimant) {
            try await PostgresPool.$admission.withValue(shares.databaseAdmission(for: claimant)) {
                try await next(request, context)
            }
        }
    }
}
