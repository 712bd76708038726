import Foundation
#if canImport(UIKit) && !os(watchOS)
import UIKit
#endif

/// Whether the app is in the foreground, for the event stream: on iOS it lets go of its
/// connection in the background (the system would cut it anyway) and comes back in the
/// foreground. Elsewhere the app is always active.
final class AppLifecycle: Sendable {
    #if canImport(UIKit) && !os(watchOS)
    private let state = LifecycleState()
    /// Observer tokens, only removed in `deinit`.
    nonisolated(unsafe) private let observers: [any NSObjectProtocol]

    init() {
        let state = self.state
        let center = NotificationCenter.default
        // Delivered on the main queue, in order; the state is an actor, so each change is sent
        // there in the order the notifications came.
        observers = [
            center.addObserver(forName: UIApplication.didEnterBackgroundNotification, object: nil, queue: .main) { _ in
                state.post(active: false)
            },
            center.addObserver(forName: UIApplication.willEnterForegroundNotification, object: nil, queue: .main) { _ in
                state.post(active: true)
            },
        ]
    }

    deinit {
        for observer in observers { NotificationCenter.default.removeObserver(observer) }
    }

    func waitUntilActive() async { await state.wait(untilActive: true) }

    /// Runs `work`, cancelling it when the app goes to the background (then throws `CancellationError`).
    func whileActive(_ work: @Sendable @escaping () async throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await work() }
            group.addTask {
                await self.state.wait(untilActive: false)
                try Task.checkCancellation()
                throw CancellationError()
            }
            _ = try await group.next()
            group.cancelAll()
        }
    }
    #else
    init() {}
    func waitUntilActive() async {}
    func whileActive(_ work: @Sendable @escaping () async throws -> Void) async throws { try await work() }
    #endif
}

#if canImport(UIKit) && !os(watchOS)
/// The foreground state and who waits for a change of it. Waits end early when their task is
/// cancelled, so a stream that stops (or whose connection ended first) never hangs on one.
private actor LifecycleState {
    private var active = true
    private var waiters: [UUID: (wanted: Bool, continuation: CheckedContinuation<Void, Never>)] = [:]

    /// From the main queue: applied in posting order.
    nonisolated func post(active: Bool) {
        Task { await self.set(active: active) }
    }

    private func set(active: Bool) {
        self.active = active
        for (id, waiter) in waiters where waiter.wanted == active {
            waiters[id] = nil
            waiter.continuation.resume()
        }
    }

    func wait(untilActive wanted: Bool) async {
        if active == wanted { return }
        let id = UUID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                if Task.isCancelled || active == wanted {
                    continuation.resume()
                } else {
                    waiters[id] = (wanted, continuation)
                }
            }
        } onCancel: {
            Task { await self.cancel(id) }
        }
    }

    private func cancel(_ id: UUID) {
        waiters.removeValue(forKey: id)?.continuation.resume()
    }
}
#endif
