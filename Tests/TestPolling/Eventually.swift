/// The tests' one wait: polls `condition` until it holds or `timeout` passes, and says
/// whether it held. A test waits for a real condition (a row, a gauge, a backend's state),
/// never for time to pass; the deadline is generous, since CI's two shared cores may be
/// busy, and only a failing test waits it out. Use it as `#expect(try await eventually { … })`, or
/// `try #require(…)` when the test cannot go on without it.
public func eventually(
    within timeout: Duration = .seconds(120), every interval: Duration = .milliseconds(10),
    until condition: () async throws -> Bool
) async throws -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try await Task.sleep(for: interval)
    }
    return try await condition()
}
