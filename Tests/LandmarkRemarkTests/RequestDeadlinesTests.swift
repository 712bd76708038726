import Testing

@testable import LandmarkRemark

/// The one task that watches every request's deadline (`RequestDeadlines`): it cancels the
/// requests still running at their deadline and no others, and starts again after it ran
/// out of requests to watch. (`BoundedWorkTests` checks the same through HTTP: a statement
/// past its deadline is cancelled on the server, and a client that hangs up has its own
/// cancelled.)
@Suite struct RequestDeadlinesTests {
    /// What a watched handler saw: when its task was cancelled, and what `finish()` said.
    private struct Outcome: Sendable {
        let cancelledAfter: Duration?
        let interruption: InterruptibleRequest.Interruption?
    }

    /// Runs a handler under `deadlines`, in a task of its own (a cancelled task stays
    /// cancelled): one that waits until its task is cancelled (`untilCancelled`), or one that
    /// finishes at once.
    private static func handle(_ deadlines: RequestDeadlines, untilCancelled: Bool) async -> Outcome {
        await Task {
            await withUnsafeCurrentTask { task -> Outcome in
                let request = InterruptibleRequest(task!)
                let start = ContinuousClock.now
                deadlines.watch(request)
                guard untilCancelled else { return Outcome(cancelledAfter: nil, interruption: request.finish()) }
                await waitForCancellation()
                return Outcome(cancelledAfter: .now - start, interruption: request.finish())
            }
        }.value
    }

    /// Suspends until the task is cancelled (an event, not a time).
    private static func waitForCancellation() async {
        let (stream, continuation) = AsyncStream<Never>.makeStream()
        await withTaskCancellationHandler {
            for await _ in stream {}
        } onCancel: {
            continuation.finish()
        }
    }

    @Test func onlyTheRequestsStillRunningAtTheirDeadlineAreCancelled() async throws {
        let deadlines = RequestDeadlines(timeout: .milliseconds(200))
        async let late = Self.handle(deadlines, untilCancelled: true)
        async let quick = Self.handle(deadlines, untilCancelled: false)
        let (lateOutcome, quickOutcome) = await (late, quick)
        #expect(quickOutcome.interruption == nil)
        #expect(lateOutcome.interruption == .deadline)
        // Never before the deadline (after it, as late as a busy machine makes it).
        #expect(try #require(lateOutcome.cancelledAfter) >= .milliseconds(200))
    }

    @Test func theWatchStartsAgainAfterItRanOutOfRequests() async throws {
        let deadlines = RequestDeadlines(timeout: .milliseconds(100))
        // The first request's deadline ends the watching task: nothing is left to watch (it
        // says so before it cancels the request).
        #expect(await Self.handle(deadlines, untilCancelled: true).interruption == .deadline)
        #expect(!deadlines.isWatching)
        // A request after that starts it again, and is cancelled at its own deadline.
        #expect(await Self.handle(deadlines, untilCancelled: true).interruption == .deadline)
        #expect(await Self.handle(deadlines, untilCancelled: false).interruption == nil)
    }

    @Test func aRequestInterruptedOnceKeepsItsFirstReason() async throws {
        // In a task of its own: the one interrupted is cancelled for good.
        let outcome = await Task {
            withUnsafeCurrentTask { task -> (InterruptibleRequest.Interruption?, Bool) in
                let request = InterruptibleRequest(task!)
                request.interrupt(.clientGone)
                request.interrupt(.deadline)
                return (request.finish(), Task.isCancelled)
            }
        }.value
        #expect(outcome.0 == .clientGone)
        #expect(outcome.1)
    }
}
