/// A failure of the harness itself (a process that would not start, an answer that was not
/// what the API promises), with what a person needs to see to understand it.
struct HarnessError: Error, CustomStringConvertible {
    var description: String

    init(_ description: String) {
        self.description = description
    }
}

/// Polls `probe` until it returns a value or `timeout` passes (then returns nil): for
/// conditions that another process makes true, where there is nothing to wait on.
func eventually<T: Sendable>(
    timeout: Duration, every interval: Duration = .milliseconds(50), _ probe: () async throws -> T?
) async throws -> T? {
    let deadline = ContinuousClock.now + timeout
    while true {
        if let value = try await probe() { return value }
        if ContinuousClock.now >= deadline { return nil }
        try await Task.sleep(for: interval)
    }
}
