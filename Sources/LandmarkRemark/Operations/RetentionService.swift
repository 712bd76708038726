import Logging
import Postgres
import ServiceLifecycle

/// Purges, on a timer, what has outlived its use: expired sessions and tokens, spent
/// login counts, old known addresses and idempotency keys (`purge_expired()`, migration
/// 0010, which names each horizon), and events older than 24 hours (tenant by tenant,
/// `purge_tenant_events()`, migration 0018); and lifts suspensions that have run out
/// (`lift_ended_suspensions()`, migration 0025), so a suspension ends within an interval;
/// and revocations no live access token can concern (`purge_auth_revocations()`, 0046).
///
/// Every replica runs one; a purge is idempotent, so several at once only share the work.
/// The first runs at a random point of the first interval, so replicas started together
/// do not purge together. Each batch is a short transaction of its own.
struct RetentionService: Service {
    let pool: PostgresPool
    /// Zero: never (an operator runs `admin.purge_expired()` instead).
    let interval: Duration
    let logger: Logger
    /// Revocations are kept this long and an hour more (`purge_auth_revocations`, migration 0046).
    var accessTokenLifetime = 3600
    /// Rows per table per transaction.
    static let batch = 10_000

    /// Rows removed by one `purge()`, per table (tokens of purged sessions not counted).
    struct Purged: Sendable, Equatable {
        var sessions = 0
        var sessionTokens = 0
        var loginFailures = 0
        var loginAddresses = 0
        var idempotencyKeys = 0
        var idTokenUses = 0
        var guestSignups = 0
        var streamTickets = 0
        var events = 0
        var authRevocations = 0
        /// Push matches dropped or removed, and pushes removed (the most of one table per batch).
        var pushRecords = 0
        /// Not rows removed: suspended accounts enabled again, their suspension over.
        var suspensionsLifted = 0

        var total: Int {
            sessions + sessionTokens + loginFailures + loginAddresses + idempotencyKeys + idTokenUses + guestSignups
                + streamTickets + events + authRevocations + pushRecords + suspensionsLifted
        }
    }

    func run() async throws {
        guard interval > .zero else {
            try? await gracefulShutdown()
            return
        }
        try? await cancelWhenGracefulShutdown {
            let seconds = interval.components.seconds
            try await Task.sleep(for: .seconds(Int64.random(in: 0..<max(1, seconds))))
            while !Task.isCancelled {
                do {
                    let purged = try await purge()
                    if purged.total > 0 { logger.info("purged expired rows", metadata: ["rows": "\(purged)"]) }
                } catch is CancellationError {
                    return
                } catch {
                    logger.warning("purging expired rows failed", metadata: ["error": "\(error)"])
                }
                try await Task.sleep(for: interval)
            }
        }
    }

    /// One pass: batches until no table has more past its horizon, then the event log.
    func purge() async throws -> Purged {
        let store = AdminStore(pool: pool)
        var purged = Purged()
        while true {
            let counts = try await store.purgeExpired(batch: Self.batch)
            purged.sessions += counts[0]
            purged.sessionTokens += counts[1]
            purged.loginFailures += counts[2]
            purged.loginAddresses += counts[3]
            purged.idempotencyKeys += counts[4]
            let signIn = try await store.purgeSignInRecords(batch: Self.batch)
            purged.idTokenUses += signIn[0]
            purged.guestSignups += signIn[1]
            purged.streamTickets += signIn[2]
            let revocations = try await store.purgeAuthRevocations(keepingSeconds: accessTokenLifetime, batch: Self.batch)
            purged.authRevocations += revocations
            let pushes = try await store.purgePushRecords(batch: Self.batch)
            purged.pushRecords += pushes
            if (counts + signIn + [revocations, pushes]).max() ?? 0 < Self.batch { break }
            try Task.checkCancellation()
        }
        purged.events = try await store.purgeEvents()
        purged.suspensionsLifted = try await store.liftEndedSuspensions()
        return purged
    }
}
