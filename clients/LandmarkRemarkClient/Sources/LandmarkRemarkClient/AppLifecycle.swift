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
    private let observers: [any NSObjectProtocol]

    init() {
        let state = self.state
        let center = NotificationCenter.default
        observers = [
            center.addObserver(forName: UIApplication.didEnterBackgroundNotification, object: nil, queue: nil) { _ in
                Task { await state.set(active: false) }
            },
            center.addObserver(forName: UIApplication.willEnterForegroundNotification, object: nil, queue: nil) { _ in
                Task { await state.set(active: true) }
            },
        ]
    }

    deinit {
        for observer in observers { NotificationCenter.default.removeObserver(observer) }
    }

    func waitUntilActive() async { await state.waitUntilActive() }

    /// Runs `work`, cancelling it when the app goes to the background (then throws `CancellationError`).
    func whileActive(_ work: @Sendable @escaping () async throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await work() }
            group.addTask {
                await self.state.waitUntilInactive()
                throw CancellationError()
            }
            try await group.next()
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
private actor LifecycleState {
    private var active = true
    private var waiters: [CheckedContinuation<Void, Never>] = []
    private var inactiveWaiters: [CheckedContinuation<Void, Never>] = []

    func set(active: Bool) {
        self.active = active
        let ready = active ? waiters : inactiveWaiters
        if active { waiters = [] } else { inactiveWaiters = [] }
        for waiter in ready { waiter.resume() }
    }

    func waitUntilActive() async {
        if active { return }
        await withCheckedContinuation { waiters.append($0) }
    }

    func waitUntilInactive() async {
        if !active { return }
        await withCheckedContinuation { inactiveWaiters.append($0) }
    }
}
#endif
