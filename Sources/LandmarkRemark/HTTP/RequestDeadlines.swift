import NIOCore
import Synchronization

/// A request's handler that can be interrupted from outside its task: past its deadline
/// (`RequestDeadlines`) or when its client went away (`ClientHangup`). Interrupting cancels
/// the handler's task, which cancels its running statement on the server.
final class InterruptibleRequest: Sendable {
    enum Interruption: Sendable {
        case deadline
        case clientGone
    }

    /// The handler's task, to cancel from another. `UnsafeCurrentTask` is not `Sendable`, but
    /// its methods that `Task` also has (`cancel()`) are safe from any task while it runs
    /// (the standard library's documentation of it), and `state`'s lock keeps it from being
    /// used once `finish()` has run, before the task ends.
    private struct Handle: @unchecked Sendable {
        let task: UnsafeCurrentTask
    }

    private enum State: Sendable {
        case running(Handle)
        case interrupted(Interruption)
        case finished
    }

    private let state: Mutex<State>

    /// `task` is the handler's own: `finish()` is called before it ends, and after that nothing
    /// here touches it (an `UnsafeCurrentTask` is only valid while its task runs).
    init(_ task: UnsafeCurrentTask) {
        state = Mutex(.running(Handle(task: task)))
    }

    /// Cancels the handler, once, unless it finished. The task's cancellation handlers run
    /// here, on the caller's thread (for a hangup, the connection's event loop) and under
    /// this lock: they must neither block nor come back to this request (the Postgres layer's
    /// only starts the server-side cancel in a task of its own).
    func interrupt(_ why: Interruption) {
        state.withLock { state in
            // Under the lock, so `finish()` cannot let the task end in between.
            guard case .running(let handle) = state else { return }
            state = .interrupted(why)
            handle.task.cancel()
        }
    }

    /// Ends the watch (nothing cancels the handler after this returns) and says what
    /// interrupted it, if anything did.
    func finish() -> Interruption? {
        state.withLock { state in
            defer { state = .finished }
            if case .interrupted(let why) = state { return why }
            return nil
        }
    }

    var isFinished: Bool {
        state.withLock { if case .finished = $0 { true } else { false } }
    }
}

/// The deadlines of a replica's requests in flight, watched by one task.
///
/// Every request has the same timeout, so deadlines come in the order requests start: a queue
/// whose head expires first. One task sleeps until the head's deadline (or a second, to drop
/// finished requests from the head), interrupts what is late, and ends when nothing is left
/// to watch; the next request starts it again. A timer of each request's own cost it two more
/// child tasks and a dispatch timer (bench/results/2026-11-30-request-deadlines.md).
final class RequestDeadlines: Sendable {
    private struct State {
        var queue = CircularBuffer<(deadline: ContinuousClock.Instant, request: InterruptibleRequest)>()
        var watching = false
    }

    let timeout: Duration
    private let state = Mutex(State())
    /// How often finished requests leave the queue when no deadline comes sooner.
    private static let sweep = Duration.seconds(1)

    init(timeout: Duration) {
        self.timeout = timeout
    }

    /// Whether a task watches the queue now (for tests).
    var isWatching: Bool {
        state.withLock { $0.watching }
    }

    /// Interrupts `request` once `timeout` has passed, unless it finished first.
    func watch(_ request: InterruptibleRequest) {
        let start = state.withLock { state in
            // Read under the lock, so the queue stays in deadline order.
            state.queue.append((ContinuousClock.now + timeout, request))
            defer { state.watching = true }
            return !state.watching
        }
        if start {
            Task { await self.run() }
        }
    }

    private func run() async {
        while let wake = expire(now: .now) {
            try? await Task.sleep(until: wake, clock: .continuous)
        }
    }

    /// Interrupts the requests past their deadline, drops finished ones from the head, and
    /// says when to look again: nil when nothing is left, and the watching task ends.
    private func expire(now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        let (late, wake) = state.withLock { state -> ([InterruptibleRequest], ContinuousClock.Instant?) in
            var late: [InterruptibleRequest] = []
            while let head = state.queue.first, head.deadline <= now || head.request.isFinished {
                state.queue.removeFirst()
                if head.deadline <= now { late.append(head.request) }
            }
            guard let head = state.queue.first else {
                state.watching = false
                return (late, nil)
            }
            return (late, min(head.deadline, now + Self.sweep))
        }
        for request in late { request.interrupt(.deadline) }
        return wake
    }
}
