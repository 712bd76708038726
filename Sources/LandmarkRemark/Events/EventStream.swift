import Logging
import Hummingbird
import NIOCore
import Postgres

/// One open `/v1/events` stream: reads its tenant's log from its position up to the
/// tenant's head in the hub whenever woken, and writes what the caller may see.
///
/// - The position moves past every event a read looked at, sent or filtered out, so a
///   stream whose viewport matches nothing reads each event once, not on every wake.
/// - Before every batch and on every heartbeat the access token is checked again as a
///   request's would be (expiry, session, user and tenant): a revoked stream ends
///   within one heartbeat.
/// - Batches are paced (`ReplayPacer`), so a stream that is far behind cannot pull the
///   log at full speed; how far behind it may start is bounded by `EventLog.resumeProblem`.
/// - The heartbeat carries the position as an SSE `id` without data (it sets the
///   client's Last-Event-ID and dispatches nothing), so a reconnect does not read again
///   what this stream already passed over.
struct EventStream {
    let identity: Identity
    let tokenHash: [UInt8]
    /// The request's logger: the stream's database reads log with its request id.
    let logger: Logger
    let box: BoundingBox?
    let pool: PostgresPool
    let hub: EventHub
    let log: EventLog
    let deadline: WriteDeadline
    var pacer: ReplayPacer
    var position: Int64
    /// The last id the client was sent (event or heartbeat).
    var announced: Int64
    /// The generation of the tenant's head the position counts in (`EventHub.Head`).
    var generation: UInt64

    /// Writes events until the client leaves, the token stops admitting it, or the hub
    /// ends the subscription (shutdown, connection closed).
    mutating func run(signals: AsyncStream<EventHub.Signal>, writer: inout any ResponseBodyWriter) async throws {
        var signal: EventHub.Signal? = .wake
        var iterator = signals.makeAsyncIterator()
        while let current = signal {
            switch current {
            case .tick:
                guard try await isLive() else { return }
                var beat = ": keep-alive\n"
                if position > announced {
                    beat += "id: \(position)\n"
                    announced = position
                }
                try await deadline.write(ByteBuffer(string: beat + "\n"), to: &writer)
            case .wake:
                guard try await catchUp(writer: &writer) else { return }
            }
            signal = await iterator.next()
        }
    }

    /// Reads and writes batches up to the tenant's head; false when the token no longer
    /// admits the stream.
    private mutating func catchUp(writer: inout any ResponseBodyWriter) async throws -> Bool {
        // Not known just after the tenant's shard moved: a wake follows once it is.
        guard let head = hub.currentHead(tenantID: identity.tenantID) else { return true }
        if head.generation != generation {
            // The tenant's ids now come from another node's range, where this position means
            // nothing: the client fetches afresh, as for an unknown Last-Event-ID.
            try await deadline.write(Self.reset(.unknownPosition, head: head.id), to: &writer)
            (position, announced, generation) = (head.id, head.id, head.generation)
            return true
        }
        while position < head.id {
            try await pacer.reserve(EventLog.batchSize)
            let batch = try await pool.withTenantReads(identity.tenantID, logger: logger) { [self] reads -> EventLog.Batch? in
                guard try await log.isLive(tenantID: identity.tenantID, tokenHash: tokenHash, on: reads) else { return nil }
                return try await log.read(
                    tenantID: identity.tenantID, viewerID: identity.userID, after: position, upTo: head.id, box: box, on: reads)
            }
            guard let batch else { return false }
            if let last = batch.entries.last {
                var buffer = ByteBuffer()
                for entry in batch.entries {
                    buffer.writeString("id: \(entry.id)\nevent: \(entry.kind)\ndata: ")
                    buffer.writeBytes(entry.data)
                    buffer.writeString("\n\n")
                }
                try await deadline.write(buffer, to: &writer)
                announced = last.id
            }
            position = batch.position
            pacer.refund(EventLog.batchSize - batch.entries.count)
        }
        return true
    }

    private func isLive() async throws -> Bool {
        try await pool.withTenantReads(identity.tenantID, logger: logger) {
            try await log.isLive(tenantID: identity.tenantID, tokenHash: tokenHash, on: $0)
        }
    }

    /// The `reset` event: the client cannot resume where it asked and must fetch what it
    /// shows afresh; the stream goes on from its tenant's head, whose id this event carries.
    static func reset(_ reason: ResetEvent.Reason, head: Int64) -> ByteBuffer {
        var event = ByteBuffer(string: "id: \(head)\nevent: reset\ndata: ")
        event.writeBytes(ResetEvent(reason: reason).jsonBytes)
        event.writeString("\n\n")
        return event
    }
}

/// Paces a stream's batches: `rate` events a second on average, `burst` at once. A
/// live stream hardly notices; a replay of thousands of events is spread out, so one
/// client cannot make the service read and send the log at full speed.
struct ReplayPacer: Sendable {
    let rate: Double
    let burst: Double
    private var tokens: Double
    private var refilled = ContinuousClock.now

    init(eventsPerSecond: Int, burst: Int) {
        self.rate = Double(eventsPerSecond)
        self.burst = Double(burst)
        self.tokens = Double(burst)
    }

    /// Takes `count` tokens before a batch of at most that many is read, waiting until the
    /// bucket would not be in debt; `refund` gives back what the batch did not use.
    mutating func reserve(_ count: Int) async throws {
        let now = ContinuousClock.now
        let elapsed = now - refilled
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        tokens = min(burst, tokens + seconds * rate)
        refilled = now
        tokens -= Double(count)
        if tokens < 0 {
            try await Task.sleep(for: .milliseconds(Int((-tokens / rate * 1000).rounded(.up))))
        }
    }

    mutating func refund(_ count: Int) {
        tokens = min(burst, tokens + Double(count))
    }
}
