import Logging
import Postgres
import ServiceLifecycle

/// Reads, every `pollInterval`, the revocation epochs and states of the tenants
/// `AccessTokenCache` follows, and the revocations above the epochs it knew, and hands them
/// to it. A poll that fails confirms nothing: the
/// cache's entries age past `maxAge` and requests go back to the database until polls answer
/// again.
struct AccessTokenCachePoller: Service {
    let cache: AccessTokenCache
    let tokens: AccessTokenStore
    let pool: PostgresPool
    let logger: Logger

    func run() async throws {
        // A service that returns ends the whole group: with the cache off, it waits idle.
        guard cache.isEnabled else {
            try? await gracefulShutdown()
            return
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.poll() }
            try? await gracefulShutdown()
            group.cancelAll()
        }
    }

    private func poll() async {
        var failing = false
        while !Task.isCancelled {
            let started = cache.now()
            let followed = cache.tenantsFollowed()
            let asked = followed.map(\.tenantID)
            do {
                let read = asked.isEmpty ? [:] : try await tokens.tenantStates(asked, on: pool, logger: logger)
                // Only a tenant whose epoch rose (or one not read yet) has revocations to read.
                var revocations = [Int64: [AccessTokenCache.Revocation]]()
                for (tenantID, known) in followed {
                    guard let current = read[tenantID], current.epoch > (known ?? 0) else { continue }
                    revocations[tenantID] = try await tokens.revocations(tenantID: tenantID, after: known, on: pool, logger: logger)
                }
                cache.observe(read, revocations: revocations, asked: asked, started: started)
                if failing { logger.notice("reading the tenants' revocation epochs works again") }
                failing = false
            } catch {
                // Once per outage: the log line says the replica checks every token again.
                if !failing {
                    logger.warning(
                        "reading the tenants' revocation epochs failed: every token is looked up until it works again",
                        metadata: ["error": "\(error)"])
                }
                failing = true
            }
            try? await Task.sleep(for: cache.settings.pollInterval)
        }
    }
}
