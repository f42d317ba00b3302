import Foundation

/// When a background session retries a failed transfer by itself (URLSession's background
/// sessions do the same): exponential backoff from 2 s, doubling, capped at 5 min, at most 10
/// attempts, and never past the task's `timeoutIntervalForResource` deadline.
///
/// "Equal jitter": the wait is half the nominal backoff plus a random part of up to the other
/// half. Unlike "full jitter" (anything from 0 to the backoff), it never retries almost
/// immediately, so a failing origin always gets a real pause; the random half still spreads out
/// the many tasks that failed together when an origin or the network went away.
public struct TransferRetryPolicy: Sendable {
    public let baseDelay: Duration
    public let multiplier: Double
    public let maximumDelay: Duration
    /// Attempts in all, the first one included.
    public let maximumAttempts: Int

    public init(
        baseDelay: Duration = .seconds(2),
        multiplier: Double = 2,
        maximumDelay: Duration = .seconds(300),
        maximumAttempts: Int = 10
    ) {
        self.baseDelay = baseDelay
        self.multiplier = max(multiplier, 1)
        self.maximumDelay = maximumDelay
        self.maximumAttempts = maximumAttempts
    }

    /// The backoff before retrying after failed attempt `attempt` (1-based), before jitter:
    /// `baseDelay · multiplier^(attempt-1)`, at most `maximumDelay`.
    public func nominalDelay(afterFailure attempt: Int) -> Duration {
        let exponent = Double(min(max(attempt, 1) - 1, 64))
        let seconds = min(baseDelay.secondsValue * pow(multiplier, exponent), maximumDelay.secondsValue)
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    /// When to start the next attempt after attempt `attempt` (1-based) failed at `now`, or
    /// `nil` when all attempts are used or the next one would start after `resourceDeadline`
    /// (then the task fails with the last error).
    public func nextAttempt(
        afterFailure attempt: Int,
        now: Date,
        resourceDeadline: Date,
        using generator: inout some RandomNumberGenerator
    ) -> Date? {
        guard attempt < maximumAttempts else { return nil }
        let nominal = nominalDelay(afterFailure: attempt).secondsValue
        let half = nominal / 2
        let wait = half + Double.random(in: 0...half, using: &generator)
        let next = now.addingTimeInterval(wait)
        return next <= resourceDeadline ? next : nil
    }
}
