import NIOCore
import Synchronization

/// Tells a request in progress that its client went away.
///
/// Hummingbird does not cancel a handler when its client disconnects, and it allows TCP
/// half-closure, so a client that closes its socket shows up only as "input closed": the
/// channel itself stays open until the response is written. This handler, one per
/// connection (`HTTP1Channel`'s additional handlers), takes input closed or the channel
/// going inactive as the client being gone, closes the channel, and wakes the request's
/// `RequestDeadlineMiddleware`, which cancels the handler: its statement is cancelled on
/// the server instead of running to the end for nobody. (A client that half-closes and
/// still waits for its answer, rare in HTTP/1.1, loses that answer.)
final class ClientHangup: ChannelInboundHandler, RemovableChannelHandler, Sendable {
    // Parts pass through untouched: only events matter here.
    typealias InboundIn = Any

    private struct State {
        var gone = false
        var waiter: CheckedContinuation<Bool, Never>?
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

    /// Suspends until the client goes away (true) or the task is cancelled (false).
    func wait() async -> Bool {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let answer: Bool? = state.withLock { state in
                    if state.gone { return true }
                    if Task.isCancelled { return false }
                    state.waiter = continuation
                    return nil
                }
                if let answer { continuation.resume(returning: answer) }
            }
        } onCancel: {
            state.withLock { state in
                defer { state.waiter = nil }
                return state.waiter
            }?.resume(returning: false)
        }
    }

    private func hangUp() {
        state.withLock { state in
            state.gone = true
            defer { state.waiter = nil }
            return state.waiter
        }?.resume(returning: true)
    }
}
