import Foundation

/// State guarded by a mutex with a condition variable, for threads that must sleep until the state
/// changes (pool workers waiting for a job, callers waiting for a lent connection).
final class ConditionLock<State>: @unchecked Sendable {
    // @unchecked: `state` is only touched with `condition` locked.
    private let condition = NSCondition()
    private var state: State

    init(_ state: State) {
        self.state = state
    }

    func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        condition.lock()
        defer { condition.unlock() }
        return try body(&state)
    }

    /// Sleeps until `body` returns a value, re-running it after every signal; `body` runs locked.
    func wait<R>(until body: (inout State) throws -> R?) rethrows -> R {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let value = try body(&state) { return value }
            condition.wait()
        }
    }

    /// Changes the state and wakes every sleeping thread so each re-checks its condition.
    func withLockBroadcasting<R>(_ body: (inout State) throws -> R) rethrows -> R {
        condition.lock()
        defer {
            condition.broadcast()
            condition.unlock()
        }
        return try body(&state)
    }

    /// Changes the state and wakes one sleeping thread.
    func withLockSignalling<R>(_ body: (inout State) throws -> R) rethrows -> R {
        condition.lock()
        defer {
            condition.signal()
            condition.unlock()
        }
        return try body(&state)
    }
}
