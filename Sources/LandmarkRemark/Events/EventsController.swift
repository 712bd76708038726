import HTTPTypes
import Hummingbird
import NIOCore
import ServiceLifecycle

/// `GET /v1/events`: Server-Sent Events of the caller's tenant.
///
/// The stream never buffers: it reads at most one batch from the log, writes it
/// with the connection's backpressure, and reads again when woken. A slow reader
/// only falls behind in the log, which is where a reconnect resumes too; a reader
/// that takes no write for `LR_EVENTS_WRITE_TIMEOUT_SECONDS` is disconnected, so a
/// stalled client does not keep its stream slot and socket buffers for ever.
struct EventsController {
    let services: AppServices
    let hub: EventHub
    let log = EventLog()

    var endpoints: RouteCollection<AppRequestContext> {
        RouteCollection(context: AppRequestContext.self)
            .get(use: stream)
    }

    @Sendable func stream(_ request: Request, context: AppRequestContext) async throws -> Response {
        let identity = try context.requireIdentity()
        var parameters = try QueryParameters(query: request.uri.query)
        let box = try parameters.string("bbox").map { text in
            guard let parsed = BoundingBox(parameter: text) else { throw AppError.malformed("bbox must be min_lng,min_lat,max_lng,max_lat") }
            return parsed
        }
        let resumeParameter = parameters.string("last_event_id")
        try parameters.finish()
        var resume: Int64?
        if let text = request.headers[.lastEventID] ?? resumeParameter {
            guard let id = Int64(text), id >= 0 else { throw AppError.malformed("Last-Event-ID must be an event id") }
            resume = id
        }
        // Subscribe before reading the head, so nothing written in between is missed.
        let subscription = try hub.subscribe(tenantID: identity.tenantID, userID: identity.userID)
        let start: Int64
        do {
            if let resume {
                start = resume
            } else {
                start = try await services.pool.withTenant(identity.tenantID) { try await log.head(tenantID: identity.tenantID, on: $0) }
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
        let deadline = WriteDeadline(timeout: services.configuration.eventWriteTimeout, channel: context.channel)
        let body = ResponseBody { [services, hub, log] writer in
            defer { hub.unsubscribe(subscription.id) }
            var position = start
            try await deadline.write(ByteBuffer(string: "retry: 2000\n: connected\n\n"), to: &writer)
            // Replay what was missed (or nothing, for a fresh stream), then wait for signals.
            // Graceful shutdown ends the signals, and so the stream, before the server waits
            // for requests in flight: a stream would otherwise never finish by itself.
            var signal: EventHub.Signal? = .wake
            var signals = subscription.signals.makeAsyncIterator()
            try await withGracefulShutdownHandler {
                while let current = signal {
                    if case .tick = current {
                        let live = try await services.pool.withTenant(identity.tenantID) {
                            try await log.sessionIsLive(tenantID: identity.tenantID, sessionID: identity.sessionID, on: $0)
                        }
                        guard live else { break }
                        try await deadline.write(ByteBuffer(string: ": keep-alive\n\n"), to: &writer)
                    } else {
                        var batch: [EventLog.Entry]
                        repeat {
                            batch = try await services.pool.withTenant(identity.tenantID) { [position] in
                                try await log.read(tenantID: identity.tenantID, userID: identity.userID, after: position, box: box, on: $0)
                            }
                            if batch.isEmpty { break }
                            var buffer = ByteBuffer()
                            for entry in batch {
                                buffer.writeString("id: \(entry.id)\nevent: \(entry.kind)\ndata: \(entry.data)\n\n")
                            }
                            try await deadline.write(buffer, to: &writer)
                            position = batch[batch.count - 1].id
                        } while batch.count == EventLog.batchSize
                    }
                    signal = await signals.next()
                }
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
