import HTTPTypes
import Hummingbird
import NIOCore
import Postgres
import ServiceLifecycle

/// `GET /v1/events`: Server-Sent Events of the caller's tenant (see `EventStream`).
///
/// The stream never buffers: it reads at most one batch from the log, writes it with
/// the connection's backpressure, and reads again when woken. A slow reader only falls
/// behind in the log, which is where a reconnect resumes too; a reader that takes no
/// write for `LR_EVENTS_WRITE_TIMEOUT_SECONDS` is disconnected.
struct EventsController {
    /// How far a stream may replay, how fast, and how long one write may wait for the client.
    struct Limits: Sendable {
        let replayMax: Int
        let replayPerSecond: Int
        let writeTimeout: Duration
    }

    let pool: PostgresPool
    let hub: EventHub
    let log: EventLog
    let limits: Limits

    /// `GET /v1/events`, behind an `Authenticator` that also takes stream tickets.
    var endpoints: RouteCollection<AppRequestContext> {
        RouteCollection(context: AppRequestContext.self)
            .get(use: stream)
    }

    @Sendable func stream(_ request: Request, context: AppRequestContext) async throws -> Response {
        let identity = try context.requireIdentity()
        let tokenHash = identity.accessTokenHash
        var parameters = try QueryParameters(query: request.uri.query)
        let box = try BoundingBox(&parameters)
        let resumeParameter = parameters.string("last_event_id")
        // Spent by `Authenticator` already, when it was the credential.
        _ = parameters.string("ticket")
        try parameters.finish()
        var resume: Int64?
        if let text = request.headers[.lastEventID] ?? resumeParameter {
            guard let id = Int64(text), id >= 0 else { throw AppError.malformed("Last-Event-ID must be an event id") }
            resume = id
        }

        let subscription = try hub.subscribe(tenantID: identity.tenantID, userID: identity.userID)
        // The slot lives exactly as long as the connection. A client that sends the request
        // and leaves (shuts its socket, or only its side of it) has its connection closed by
        // `ClientHangup` at once, so the slot is free now, not at the next heartbeat.
        context.channel.closeFuture.whenComplete { [hub] _ in hub.unsubscribe(subscription.id) }
        let head: EventHub.Head
        let start: Int64
        let reset: ResetEvent.Reason?
        do {
            // Subscribed first, so nothing that becomes final after the head is read is missed.
            head = try await hub.head(tenantID: identity.tenantID)
            if let resume {
                reset = try await pool.withTenantReads(identity.tenantID, logger: context.logger) {
                    try await log.resumeProblem(
                        tenantID: identity.tenantID, lastEventID: resume, head: head,
                        maxReplay: limits.replayMax, on: $0)
                }
                start = reset == nil ? resume : head.id
            } else {
                (start, reset) = (head.id, nil)
            }
        } catch {
            hub.unsubscribe(subscription.id)
            throw error
        }
        let headers: HTTPFields = [
            .contentType: "text/event-stream; charset=utf-8",
            .cacheControl: "no-cache",
            HTTPField.Name("X-Accel-Buffering")!: "no",
        ]
        let initial = EventStream(
            identity: identity, tokenHash: tokenHash, logger: context.logger, box: box, pool: pool, hub: hub, log: log,
            deadline: WriteDeadline(timeout: limits.writeTimeout, channel: context.channel),
            pacer: ReplayPacer(eventsPerSecond: limits.replayPerSecond, burst: EventLog.batchSize * 2),
            position: start, announced: resume ?? start, generation: head.generation)
        let body = ResponseBody { [hub] writer in
            defer { hub.unsubscribe(subscription.id) }
            var stream = initial
            try await stream.deadline.write(ByteBuffer(string: "retry: 2000\n: connected\n\n"), to: &writer)
            if let reset {
                try await stream.deadline.write(EventStream.reset(reset, head: start), to: &writer)
                stream.announced = start
            }
            // Graceful shutdown ends the signals, and so the stream, before the server waits
            // for requests in flight: a stream would otherwise never finish by itself.
            try await withGracefulShutdownHandler {
                try await stream.run(signals: subscription.signals, writer: &writer)
            } onGracefulShutdown: {
                hub.unsubscribe(subscription.id)
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: headers, body: body)
    }
}

/// Bounds how long one write may wait for a client that does not read.
///
/// The writer waits on the connection's backpressure; when the socket stays full
/// past the timeout the connection is closed, which fails the pending write and
/// so ends the stream (its `defer` frees the slot). Closing is the only way out
/// of a write that is parked on backpressure.
struct WriteDeadline: Sendable {
    let timeout: Duration
    let channel: any Channel

    func write(_ buffer: ByteBuffer, to writer: inout any ResponseBodyWriter) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { [timeout, channel] in
                try await Task.sleep(for: timeout)
                channel.close(promise: nil)
            }
            try await writer.write(buffer)
            group.cancelAll()
        }
    }
}

extension HTTPField.Name {
    static let lastEventID = Self("Last-Event-ID")!
}
