import CLibPQ
import Foundation
import Logging
import Synchronization

/// `LISTEN` on a dedicated connection, delivered as an `AsyncSequence`.
///
/// The connection lives on its own thread, which waits in `poll(2)` on the
/// socket, so it costs nothing while quiet and never blocks an event loop.
/// When the connection breaks it reconnects with backoff and yields
/// `.connected` again: notifications sent while it was away are lost, and
/// a consumer must then re-read whatever log the notifications point into.
public struct PostgresListener: AsyncSequence, Sendable {
    public enum Event: Sendable, Equatable {
        /// The listener is (again) connected and listening on every channel.
        case connected
        case notification(PostgresNotification)
    }

    public typealias Element = Event

    let conninfo: String
    let channels: [String]
    let logger: Logger

    public init(conninfo: String, channels: [String], logger: Logger = Logger(label: "postgres.listener")) {
        self.conninfo = conninfo
        self.channels = channels
        self.logger = logger
    }

    public func makeAsyncIterator() -> AsyncStream<Event>.Iterator {
        let (stream, continuation) = AsyncStream.makeStream(of: Event.self)
        let stopped = StopFlag()
        continuation.onTermination = { _ in stopped.stop() }
        let worker = Worker(conninfo: conninfo, channels: channels, logger: logger, stopped: stopped, continuation: continuation)
        Thread.detachNewThread { worker.run() }
        return stream.makeAsyncIterator()
    }

    final class StopFlag: Sendable {
        private let flag = Atomic(false)
        func stop() { flag.store(true, ordering: .relaxed) }
        var isStopped: Bool { flag.load(ordering: .relaxed) }
    }

    struct Worker: Sendable {
        let conninfo: String
        let channels: [String]
        let logger: Logger
        let stopped: StopFlag
        let continuation: AsyncStream<Event>.Continuation

        func run() {
            var backoff = 0.1
            while !stopped.isStopped {
                do {
                    let connection = try LibPQConnection(conninfo: conninfo)
                    for channel in channels {
                        _ = try connection.executeBlocking(simple: "LISTEN " + connection.escapeIdentifier(channel))
                    }
                    backoff = 0.1
                    continuation.yield(.connected)
                    try listen(on: connection)
                } catch {
                    if stopped.isStopped { break }
                    logger.warning("database listener disconnected, reconnecting", metadata: ["error": "\(error)"])
                    Thread.sleep(forTimeInterval: backoff)
                    backoff = Swift.min(backoff * 2, 2)
                }
            }
            continuation.finish()
        }

        /// Waits for input in short slices so a stop request is noticed promptly.
        private func listen(on connection: LibPQConnection) throws {
            let socket = connection.socket
            while !stopped.isStopped {
                var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
                let ready = poll(&descriptor, 1, 250)
                if ready < 0, errno != EINTR {
                    throw PostgresError(kind: .connectionLost, message: "poll failed")
                }
                guard ready > 0 else { continue }
                for notification in try connection.consumeNotifications() {
                    continuation.yield(.notification(notification))
                }
                guard connection.isHealthy else {
                    throw PostgresError(kind: .connectionLost, message: "listener connection closed")
                }
            }
        }
    }
}

/// Sends a notification on `channel` with `payload` through the pool (`pg_notify`).
extension PostgresPool {
    public func notify(channel: String, payload: String) async throws {
        try await query("SELECT pg_notify(\(channel), \(payload))")
    }
}
