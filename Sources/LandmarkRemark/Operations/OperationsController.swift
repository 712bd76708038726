import Credentials
import Hummingbird
import Photos
import Postgres
import Prometheus

/// `/healthz`, `/readyz` and `/metrics`: for load balancers, orchestrators and Prometheus.
struct OperationsController {
    let pool: PostgresPool
    let migrator: PostgresMigrator
    let hashing: HashingPool
    let events: EventHub
    let registry: PrometheusCollectorRegistry
    let photoWorkers: PhotoWorkers
    let shares: FairShares
    let moderation = ModerationGauges()
    let photos = PhotoGauges()

    func register(on router: Router<AppRequestContext>) {
        router.get("healthz") { _, _ in Self.text("ok\n") }
        router.get("readyz", use: ready)
        router.get("metrics", use: metrics)
    }

    /// Ready when the database answers, every migration this build knows is applied and, on
    /// a Citus coordinator, the tables are distributed as expected (`landmark-remark distribute`).
    @Sendable func ready(_ request: Request, context: AppRequestContext) async throws -> Response {
        let status: PostgresMigrator.Status
        var problems: [String] = []
        do {
            status = try await migrator.status(pool: pool)
            if status == .current { problems = try await AdminStore.distributionProblems(pool) }
        } catch {
            context.logger.warning("readiness check failed", metadata: ["error": .string(String(reflecting: error))])
            throw AppError.unavailable()
        }
        switch status {
        case .current where problems.isEmpty:
            return Self.text("ready\n")
        case .current:
            throw AppError(.serviceUnavailable, code: "unavailable", title: "Service unavailable",
                           detail: "schema not distributed as expected: \(problems.joined(separator: "; "))", retryAfter: 5)
        case .pending(let names):
            throw AppError(.serviceUnavailable, code: "unavailable", title: "Service unavailable",
                           detail: "migrations pending: \(names.joined(separator: ", "))", retryAfter: 5)
        case .changed(let name):
            throw AppError(.serviceUnavailable, code: "unavailable", title: "Service unavailable",
                           detail: "applied migration \(name) differs from this build's file", retryAfter: 5)
        }
    }

    static func text(_ body: String) -> Response {
        Response(status: .ok, headers: [.contentType: "text/plain; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    @Sendable func metrics(_ request: Request, context: AppRequestContext) async throws -> Response {
        // Pool figures are read at scrape time rather than kept up to date on every checkout.
        let statistics = pool.statistics
        registry.makeGauge(descriptor: .init(metricName: "lr_db_pool_open", unitName: "", helpText: "Database connections open")).set(Int64(statistics.open))
        registry.makeGauge(descriptor: .init(metricName: "lr_db_pool_in_use", unitName: "", helpText: "Database connections lent out")).set(Int64(statistics.inUse))
        registry.makeGauge(descriptor: .init(metricName: "lr_db_pool_idle", unitName: "", helpText: "Database connections idle")).set(Int64(statistics.idle))
        registry.makeGauge(descriptor: .init(metricName: "lr_db_pool_waiting", unitName: "", helpText: "Requests waiting for a database connection")).set(Int64(statistics.waiting))
        registry.makeGauge(descriptor: .init(metricName: "lr_password_hashing_in_flight", unitName: "", helpText: "scrypt operations running")).set(Int64(hashing.inFlight))
        registry.makeGauge(descriptor: .init(metricName: "lr_password_hashing_waiting", unitName: "", helpText: "scrypt operations queued")).set(Int64(hashing.waiting))
        registry.makeGauge(descriptor: .init(metricName: "lr_event_streams_open", unitName: "", helpText: "Open /v1/events streams"))
            .set(Int64(events.openStreams))
        registry.makeGauge(descriptor: .init(metricName: "lr_event_log_horizon", unitName: "", helpText: "Event id up to which the log is final (one server; 0 where Citus holds the log, which has a head per tenant)"))
            .set(events.horizonGauge)
        registry.makeGauge(descriptor: .init(metricName: "lr_event_log_polls", unitName: "", helpText: "Reads of the event log's horizon since start"))
            .set(Int64(events.polls))
        do {
            try await moderation.update(registry, pool: pool)
            try await photos.update(registry, pool: pool, workers: photoWorkers, uploads: shares.photoUploadsInFlight)
        } catch {
            // The other figures still help while the database does not answer.
            context.logger.warning("reading the moderation and photo figures failed", metadata: ["error": .string(String(reflecting: error))])
        }
        var buffer = [UInt8]()
        registry.emit(into: &buffer)
        return Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: buffer)))
    }
}
