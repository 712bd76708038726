import Hummingbird
import NIOCore
import Synchronization

/// Tells a handler when its client has gone: the connection closed, or its input ended.
///
/// Hummingbird allows remote half-closure, so a client that sends its request and shuts
/// its socket leaves the connection open until the server's next write fails. For an
/// event stream that write is the next heartbeat (15 s), and until then the stream held
/// its slot. One watcher sits in every connection's pipeline (added through
/// `HTTP1Channel.Configuration.additionalChannelHandlers`) and remembers the end, so a
/// handler that asks after the fact still hears of it.
final class ClientConnectionWatcher: ChannelInboundHandler, RemovableChannelHandler, Sendable {
    typealias InboundIn = NIOAny

    private struct State {
        var gone = false
        var callbacks: [@Sendable () -> Void] = []
    }

    private let state = Mutex(State())

    /// Runs `callback` once when the client goes, or now if it already has.
    func whenClientGone(_ callback: @escaping @Sendable () -> Void) {
        let gone = state.withLock { state -> Bool in
            if !state.gone { state.callbacks.append(callback) }
            return state.gone
        }
        if gone { callback() }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed { clientGone() }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        clientGone()
        context.fireChannelInactive()
    }

    private func clientGone() {
        let callbacks = state.withLock { state -> [@Sendable () -> Void] in
            state.gone = true
            defer { state.callbacks = [] }
            return state.callbacks
        }
        for callback in callbacks { callback() }
    }

    /// The watcher of `channel`'s connection; nil where there is none (the router tests).
    static func of(_ channel: any Channel) async -> ClientConnectionWatcher? {
        try? await channel.pipeline.handler(type: ClientConnectionWatcher.self).get()
    }
}
