import CLibPQ
import NIOPosix

/// Cancelling a statement's task cancels the statement on the server.
///
/// A task that stops waiting would leave its statement running, and its connection
/// unusable until the server answers. Instead, cancelling the task sends libpq's cancel
/// request (`PQcancel`, on the pool's connect threads since it blocks on a connection of
/// its own), and the task keeps reading: the server ends the statement with SQLSTATE
/// `57014`, the rest of the pipeline is drained up to its Sync, and the connection goes
/// back to the pool idle and healthy.
extension LibPQConnection {
    /// Runs `body`, which sends statements and reads every result, so that cancelling the
    /// task cancels what runs on the server. Returns only once the cancel request, if one
    /// was sent, is done: a request still on its way could otherwise hit the next
    /// borrower's statement (the server ignores one that arrives while it is idle).
    func cancellable<T>(_ body: () async throws -> T) async throws -> T {
        let outcome: Result<T, any Error>
        do {
            outcome = .success(try await withTaskCancellationHandler(operation: body, onCancel: requestCancel))
        } catch {
            outcome = .failure(error)
        }
        let pending = pendingCancel.withLock { pending in
            defer { pending = nil }
            return pending
        }
        await pending?.value
        return try outcome.get()
    }

    /// Asks the server to cancel what this connection runs now; at most once per statement.
    /// Runs from the cancellation handler, on whatever thread cancelled the task.
    private func requestCancel() {
        guard cancelHandle != nil else { return }
        let threads = cancelThreads
        pendingCancel.withLock { pending in
            guard pending == nil else { return }
            pending = Task { [self] in
                _ = try? await threads.runIfActive { [self] in
                    var message = [CChar](repeating: 0, count: 256)
                    _ = PQcancel(cancelHandle, &message, Int32(message.count))
                }
            }
        }
    }
}
