import Glibc

/// Delays between reconnection attempts: 50 ms, doubling, at most 1 s.
struct ReconnectBackoff {
    private(set) var current: Duration = .milliseconds(50)
    let maximum: Duration = .seconds(1)

    mutating func nextDelay() -> Duration {
        defer { current = min(current * 2, maximum) }
        return current
    }

    /// Blocks the calling (dedicated) thread.
    static func sleep(_ delay: Duration) {
        let (seconds, attoseconds) = delay.components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0, errno == EINTR {
            request = remaining
        }
    }
}
