import NIOCore
import Synchronization

/// Tells a request in progress that its client went away.
///
/// Hummingbird does not cancel a handler when its client disconnects, and it allows TCP
/// half-closure, so a client that closes its socket shows up only as "input closed": the
/// channel itself stays open until the response is written. This handler, one per
/// connection (`HTTP1Channel`'s additional handlers), takes input closed or the channel
/// going inactive as the client being gone, closes the channel, and interrupts the request
/// being served (`RequestDeadlineMiddleware`): its handler is cancelled, and its statement on
/// the server instead of running to the end for nobody. (A client that half-closes and still
/// waits for its answer, rare in HTTP/1.1, loses that answer.)
final class ClientHangup: ChannelInboundHandler, RemovableChannelHandler, Sendable {
    // Parts pass through untouched: only events matter here.
    typealias InboundIn = Any

    private struct State {
        var gone = false
        /// The request being served (HTTP/1.1 serves one at a time on a connection).
        var request: InterruptibleRequest?
    }

    private let state = Mutex(State())
    /// The connections being served, so a request can find its connection's watcher.
    private static let watching = Mutex<[ObjectIdentifier: ClientHangup]>([:])

    /// The watcher of `channel`, if it has one (not in router tests, which have no socket).
    static func of(_ channel: any Channel) -> ClientHangup? {
        watching.withLock { $0[ObjectIdentifier(channel)] }
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let key = ObjectIdentifier(context.channel)
        Self.watching.withLock { $0[key] = self }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        let key = ObjectIdentifier(context.channel)
        Self.watching.withLock { _ = $0.removeValue(forKey: key) }
        hangUp()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.fireChannelRead(data)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed = event {
            hangUp()
            context.close(promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        hangUp()
        context.fireChannelInactive()
    }

    /// Interrupts `request` when the client goes away (at once if it has), until `unwatch()`.
    func watch(_ request: InterruptibleRequest) {
        let gone = state.withLock { state in
            if !state.gone { state.request = request }
            return state.gone
        }
        if gone { request.interrupt(.clientGone) }
    }

    func unwatch() {
        state.withLock { $0.request = nil }
    }

    private func hangUp() {
        state.withLock { state in
            state.gone = true
            defer { state.request = nil }
            return state.request
        }?.interrupt(.clientGone)
    }
}
