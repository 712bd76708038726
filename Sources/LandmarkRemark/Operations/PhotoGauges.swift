import Photos
import Postgres
import Prometheus
import Synchronization

/// Photos on `/metrics`: per tenant, what it stores (`lr_photos_stored`,
/// `lr_photo_bytes_stored`), read at scrape time like the moderation figures; and on this
/// replica, the uploads admitted (`lr_photo_uploads_in_flight`: their bodies are in memory or
/// on their way), those being decoded or waiting for a worker (`lr_photo_jobs_in_flight`)
/// and the CPU the workers used (`lr_photo_worker_cpu_seconds_total`).
final class PhotoGauges: Sendable {
    private let shown = Mutex<Set<String>>([])
    /// The workers' CPU already added to the counter.
    private let countedCPU = Mutex(Duration.zero)

    func update(_ registry: PrometheusCollectorRegistry, pool: PostgresPool, workers: PhotoWorkers, uploads: Int) async throws {
        registry.makeGauge(name: "lr_photo_uploads_in_flight", labels: [], help: "Photo uploads on this replica past their share: bodies being read, waiting for a worker or decoding")
            .set(Int64(uploads))
        registry.makeGauge(name: "lr_photo_jobs_in_flight", labels: [], help: "Photo uploads being decoded or waiting for a worker on this replica")
            .set(Int64(workers.inFlight))
        let cpu = workers.cpu
        let added = countedCPU.withLock { counted in
            defer { counted = cpu }
            return cpu - counted
        }
        let (seconds, attoseconds) = added.components
        registry.makeCounter(name: "lr_photo_worker_cpu_seconds_total", labels: [], help: "CPU time (user and system) the sandboxed photo workers of this replica used")
            .increment(by: Double(seconds) + Double(attoseconds) / 1e18)
        let stored = try await AdminStore.photoUsage(pool)
        let now = Set(stored.map(\.tenant))
        let gone = shown.withLock { shown in
            defer { shown = now }
            return shown.subtracting(now)
        }
        for (tenant, photos, bytes) in stored { set(registry, tenant, photos: photos, bytes: bytes) }
        for tenant in gone { set(registry, tenant, photos: 0, bytes: 0) }
    }

    private func set(_ registry: PrometheusCollectorRegistry, _ tenant: String, photos: Int, bytes: Int) {
        let labels = [("tenant", tenant)]
        registry.makeGauge(name: "lr_photos_stored", labels: labels, help: "Photos stored").set(Int64(photos))
        registry.makeGauge(name: "lr_photo_bytes_stored", labels: labels, help: "Bytes of photo variants stored (what quotas count)")
            .set(Int64(bytes))
    }
}
