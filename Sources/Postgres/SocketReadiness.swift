import CEpoll
import Foundation
import Synchronization

/// One thread that waits, with `epoll`, until libpq sockets can be read or written, and
/// resumes the task waiting on each.
///
/// A pool's connections run libpq in non-blocking mode on the task that runs the statement:
/// it sends, then suspends here until the server's answer arrives, and reads the answer when
/// resumed. Waiting costs one wakeup of this thread per answer, where a thread per blocking
/// connection cost a wakeup to start the statement, one when the answer came, and a hop back
/// through an event loop (measured in bench/results/2026-11-23-nonblocking.md).
///
/// Each wait is one-shot (`EPOLLONESHOT`): a socket is armed while exactly one task waits on
/// it, and the pool lends a connection to one task at a time.
final class SocketReadiness: Sendable {
    struct Interest: OptionSet, Sendable {
        let rawValue: UInt32
        static let readable = Interest(rawValue: EPOLLIN.rawValue)
        static let writable = Interest(rawValue: EPOLLOUT.rawValue)
    }

    private struct State {
        var waiting: [Int32: UnsafeContinuation<Void, any Error>] = [:]
        var closed = false
    }

    private let epoll: Int32
    /// Written once, by `shutdown()`, to end the thread.
    private let wakeup: Int32
    private let state = Mutex(State())

    init() throws {
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        wakeup = eventfd(0, Int32(EFD_CLOEXEC) | Int32(EFD_NONBLOCK))
        guard epoll >= 0, wakeup >= 0 else {
            if epoll >= 0 { close(epoll) }
            if wakeup >= 0 { close(wakeup) }
            throw PostgresError(kind: .connectionFailed, message: "cannot create an epoll instance: \(String(cString: strerror(errno)))")
        }
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.fd = wakeup
        _ = epoll_ctl(epoll, EPOLL_CTL_ADD, wakeup, &event)
        // The thread holds the object until `shutdown()` ends it.
        Thread.detachNewThread { [self] in
            // Named from inside: a thread otherwise keeps the name of the one that started it.
            Thread.current.name = "postgres-io"
            run()
        }
    }

    /// Suspends until `socket` is ready for one of `interest` (or hung up: the caller's next
    /// libpq call then reports the broken connection). Throws `.poolClosed` after `shutdown()`.
    func wait(for socket: Int32, _ interest: Interest) async throws {
        try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Void, any Error>) in
            let accepted = state.withLock { state -> Bool in
                guard !state.closed else { return false }
                precondition(state.waiting[socket] == nil, "two tasks wait on one database connection")
                state.waiting[socket] = continuation
                return true
            }
            guard accepted else {
                return continuation.resume(throwing: PostgresError.poolClosed)
            }
            var event = epoll_event()
            event.events = interest.rawValue | EPOLLONESHOT.rawValue | EPOLLRDHUP.rawValue
            event.data.fd = socket
            // A socket stays in the set, disarmed, between waits: re-arming is one call. A closed
            // socket leaves the set by itself, so a new connection on the same number is added again.
            if epoll_ctl(epoll, EPOLL_CTL_MOD, socket, &event) == 0 { return }
            if errno == ENOENT, epoll_ctl(epoll, EPOLL_CTL_ADD, socket, &event) == 0 { return }
            let message = String(cString: strerror(errno))
            if let waiting = state.withLock({ $0.waiting.removeValue(forKey: socket) }) {
                waiting.resume(throwing: PostgresError(kind: .connectionLost, message: "cannot wait for the database socket: \(message)"))
            }
        }
    }

    /// Ends the thread; tasks still waiting fail with `.poolClosed`.
    func shutdown() {
        let first = state.withLock { state -> Bool in
            defer { state.closed = true }
            return !state.closed
        }
        guard first else { return }
        var one: UInt64 = 1
        _ = write(wakeup, &one, MemoryLayout<UInt64>.size)
    }

    private func run() {
        let capacity = 64
        let events = UnsafeMutablePointer<epoll_event>.allocate(capacity: capacity)
        defer { events.deallocate() }
        var stopping = false
        while !stopping {
            let count = epoll_wait(epoll, events, Int32(capacity), -1)
            if count < 0 {
                if errno == EINTR { continue }
                break
            }
            var ready: [UnsafeContinuation<Void, any Error>] = []
            state.withLock { state in
                for index in 0..<Int(count) {
                    let socket = events[index].data.fd
                    if socket == wakeup {
                        stopping = true
                    } else if let waiting = state.waiting.removeValue(forKey: socket) {
                        ready.append(waiting)
                    }
                }
            }
            // Resumed outside the lock: each enqueues its task on the task's executor.
            for waiting in ready { waiting.resume() }
        }
        let stranded = state.withLock { state -> [UnsafeContinuation<Void, any Error>] in
            state.closed = true
            defer { state.waiting = [:] }
            return Array(state.waiting.values)
        }
        for waiting in stranded { waiting.resume(throwing: PostgresError.poolClosed) }
        close(epoll)
        close(wakeup)
    }
}
