import Postgres
import Prometheus
import Synchronization

/// The 24-hour clock on `/metrics`: per tenant, its open reports and the age of the oldest
/// (`lr_moderation_open_reports`, `lr_moderation_oldest_open_report_seconds`), read at scrape
/// time. A tenant whose reports were all decided since the last scrape reads zero, not the
/// last figure it had.
final class ModerationGauges: Sendable {
    private let shown = Mutex<Set<String>>([])

    func update(_ registry: PrometheusCollectorRegistry, pool: PostgresPool) async throws {
        let stats = try await AdminStore.openReports(pool)
        let now = Set(stats.map(\.tenant))
        let gone = shown.withLock { shown in
            defer { shown = now }
            return shown.subtracting(now)
        }
        for (tenant, open, oldest) in stats {
            gauges(registry, tenant).open.set(Int64(open))
            gauges(registry, tenant).oldest.set(oldest)
        }
        for tenant in gone {
            gauges(registry, tenant).open.set(Int64(0))
            gauges(registry, tenant).oldest.set(0.0)
        }
    }

    private func gauges(_ registry: PrometheusCollectorRegistry, _ tenant: String) -> (open: Gauge, oldest: Gauge) {
        let labels = [("tenant", tenant)]
        return (
            registry.makeGauge(name: "lr_moderation_open_reports", labels: labels, help: "Open reports awaiting a moderator"),
            registry.makeGauge(
                name: "lr_moderation_oldest_open_report_seconds", labels: labels,
                help: "Age of the oldest open report (app review teams expect action within 86400)"))
    }
}
