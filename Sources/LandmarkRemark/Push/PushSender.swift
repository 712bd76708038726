import APNs
import Foundation
import Logging
import Postgres
import ServiceLifecycle

/// Sends the pushes matching queued. Every replica may run one: per tenant, the sender that
/// holds the tenant's queue turns the notes the write matched (`push_notes`) into matches per
/// watcher (`push_matches`), sends the due ones, user by user, and records each push; the
/// others find the queue held and move on, so each push goes once. APNs busy, failing or
/// silent rests the tenant's queue (5 s, doubling up to the cap) with its matches left pending;
/// a device APNs calls gone is removed.
///
/// Per user: nothing in their quiet hours, and at most `perUserPerHour` pushes in any hour.
/// Matches beyond wait for the hour to allow another push, and go then as one summary ("5 new
/// notes near Home"), as do more matches at once than the hour has room for.
final class PushSender: Service, Sendable {
    let pool: PostgresPool
    let outbox: PushOutbox
    /// Nil without a data key: no tenant's APNs key can be opened, nothing is sent.
    let credentials: TenantAPNsStore?
    let apns: APNsClient
    let clock: WallClock
    let settings: PushSettings
    let logger: Logger
    /// The polling, the queues' holding and resting, shared with the mail sender.
    let loop: SenderLoop
    /// Runs after APNs took a push and before it is recorded (given the watcher's id): tests
    /// make a sender die there (it throws), the window in which a push is sent twice.
    let afterDelivered: @Sendable (Int64) async throws -> Void

    init(
        pool: PostgresPool, credentials: TenantAPNsStore?, apns: APNsClient, clock: WallClock, settings: PushSettings, logger: Logger,
        afterDelivered: @escaping @Sendable (Int64) async throws -> Void = { _ in }
    ) {
        self.pool = pool
        self.afterDelivered = afterDelivered
        self.outbox = PushOutbox()
        self.credentials = credentials
        self.apns = apns
        self.clock = clock
        self.settings = settings
        self.logger = logger
        loop = SenderLoop(
            queues: PushOutbox.queues, pool: pool, clock: clock, lease: settings.lease, pollInterval: settings.pollInterval, logger: logger)
    }

    func run() async throws {
        if settings.senderEnabled, credentials != nil {
            await loop.run(failure: "sending pushes failed") { try await self.deliverDue() }
        } else {
            try? await gracefulShutdown()
        }
        await apns.shutdown()
    }

    /// One pass over every tenant with pushes due.
    func deliverDue() async throws {
        try await loop.drainEach(try await outbox.dueTenants(now: clock.now(), on: pool), failure: "sending a tenant's pushes failed") {
            try await self.drain(tenantID: $0)
        }
    }

    /// Sends the tenant's due pushes while this sender holds its queue; cancelled, it lets the
    /// queue go first, so another replica need not wait out the lease.
    func drain(tenantID: Int64) async throws {
        try await loop.whileHolding(tenantID: tenantID) { db, failures in
            try await drainHeld(tenantID: tenantID, failures: failures, db: db)
        }
    }

    private func drainHeld(tenantID: Int64, failures: Int, db: TenantDB) async throws {
        guard let store = credentials,
            let credentials = try await db.run({ try await store.credentials(tenantID: tenantID, on: $0, logger: self.logger) })
        else {
            try await loop.rest(db, for: .seconds(60), error: "the tenant has no APNs credentials this replica can open")
            return
        }
        var worked = false
        while true {
            let expanded = try await db.run { try await self.outbox.expand(tenantID: tenantID, limit: 100, on: $0) }
            let due = try await db.run { try await self.outbox.due(tenantID: tenantID, now: self.clock.now(), limit: 500, on: $0) }
            if due.isEmpty {
                if expanded > 0 { continue }
                break
            }
            var byUser: [(userID: Int64, matches: [PushOutbox.Due])] = []
            for match in due {
                if byUser.last?.userID == match.userID { byUser[byUser.count - 1].matches.append(match) } else { byUser.append((match.userID, [match])) }
            }
            for (userID, matches) in byUser {
                switch try await push(matches, to: userID, tenantID: tenantID, credentials: credentials, db: db) {
                case .done(let sent): worked = worked || sent
                case .rest(let reason, let retryAfter):
                    let backoff = max(SenderQueues.rest(failures: failures, cap: settings.backoffCap), .seconds(retryAfter ?? 0))
                    logger.warning("APNs cannot take the tenant's pushes now; the queue rests", metadata: [
                        "tenant_id": "\(tenantID)", "error": "\(reason)", "rest_ms": "\(backoff.milliseconds)"])
                    try await loop.rest(db, for: backoff, error: reason)
                    return
                }
                guard try await loop.renew(db) != nil else { return }
            }
        }
        try await loop.release(db, worked: worked)
    }

    private enum Pushed {
        case done(sent: Bool)
        case rest(reason: String, retryAfter: Int?)
    }

    /// One user's due matches: dropped if no longer to be pushed, postponed past a full hour,
    /// else pushed to each of their live devices, one by one or as one summary.
    private func push(
        _ matches: [PushOutbox.Due], to userID: Int64, tenantID: Int64, credentials: APNsCredentials, db: TenantDB
    ) async throws -> Pushed {
        let now = clock.now()
        let stale = matches.filter { !$0.pushable }.map(\.id)
        if !stale.isEmpty { try await db.run { try await self.outbox.drop(tenantID: tenantID, ids: stale, now: now, on: $0) } }
        let pushable = matches.filter(\.pushable)
        guard !pushable.isEmpty else { return .done(sent: false) }
        // Never in the user's quiet hours: what matched waits for their end.
        if let until = pushable.compactMap(\.quietUntil).min() {
            try await db.run { try await self.outbox.postpone(tenantID: tenantID, ids: pushable.map(\.id), until: until, on: $0) }
            return .done(sent: false)
        }
        let (count, first) = try await db.run { try await self.outbox.sent(tenantID: tenantID, userID: userID, since: now - 3600, on: $0) }
        let room = settings.perUserPerHour - count
        guard room > 0 else {
            let until = (first ?? now) + 3600
            try await db.run { try await self.outbox.postpone(tenantID: tenantID, ids: pushable.map(\.id), until: until, on: $0) }
            return .done(sent: false)
        }
        var devices = try await db.run { try await self.outbox.devices(tenantID: tenantID, userID: userID, now: now, on: $0) }
        guard !devices.isEmpty else {
            try await db.run { try await self.outbox.drop(tenantID: tenantID, ids: pushable.map(\.id), now: now, on: $0) }
            return .done(sent: false)
        }
        let pushes: [(PushMessages.Message, [PushOutbox.Due])] =
            pushable.count <= room ? pushable.map { (PushMessages.single($0), [$0]) } : [(PushMessages.summary(pushable), pushable)]
        var sentAny = false
        for (message, carried) in pushes {
            var (delivered, unregistered) = (0, 0)
            var retry: Pushed?
            for device in devices {
                let notification = APNsNotification(
                    deviceToken: device.token, environment: device.environment == "sandbox" ? .sandbox : .production, topic: device.appID,
                    collapseID: message.collapseID, expiration: now + 86400, priority: 10, payload: message.payload)
                switch await apns.send(notification, credentials: credentials, logger: logger) {
                case .delivered: delivered += 1
                case .unregistered(let reason):
                    unregistered += 1
                    logger.info("APNs called a device gone; removed", metadata: ["tenant_id": "\(tenantID)", "reason": "\(reason)"])
                    try await db.run { try await self.outbox.removeDevice(tenantID: tenantID, token: device.token, on: $0) }
                    devices.removeAll { $0.token == device.token }
                case .rejected(let status, let reason):
                    logger.warning("APNs refused a push", metadata: ["tenant_id": "\(tenantID)", "status": "\(status)", "reason": "\(reason)"])
                case .retryLater(let status, let reason, let retryAfter):
                    retry = .rest(reason: "\(status.map(String.init) ?? "no answer"): \(reason)", retryAfter: retryAfter)
                case .credentialsRefused(let reason):
                    retry = .rest(reason: "APNs refused the tenant's credentials: \(reason)", retryAfter: 600)
                }
                if retry != nil { break }
            }
            // Some device took it: it counts as sent, and is not sent again to the others.
            if delivered > 0 {
                try await afterDelivered(userID)
                try await db.run { try await self.outbox.record(
                    tenantID: tenantID, userID: userID, watchID: carried[0].watchID, matchIDs: carried.map(\.id), delivered: delivered,
                    unregistered: unregistered, now: now, on: $0) }
                sentAny = true
            } else if let retry {
                return retry
            } else {
                try await db.run { try await self.outbox.drop(tenantID: tenantID, ids: carried.map(\.id), now: now, on: $0) }
            }
            if let retry { return retry }
        }
        return .done(sent: sentAny)
    }
}
