/// When to retry a webhook delivery: the Standard Webhooks schedule Ferry follows
/// (SAFETY.md): after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h, each ±20%, then give up —
/// about a day and a half of trying in all.
///
/// Jitter keeps endpoints that failed together (an outage) from being retried in lockstep.
/// Randomness is injected so tests are deterministic.
public struct WebhookRetrySchedule: Sendable {
    public static let standardDelays: [Duration] = [
        .seconds(5), .seconds(5 * 60), .seconds(30 * 60),
        .seconds(2 * 3600), .seconds(5 * 3600), .seconds(10 * 3600), .seconds(10 * 3600),
    ]

    /// Nominal delay before each retry; the count is the number of retries.
    public let delays: [Duration]
    /// Each delay is multiplied by a factor drawn uniformly from `1 ± jitter`.
    public let jitter: Double
    /// The longest `Retry-After` honoured: a receiver cannot park a delivery for longer.
    public let retryAfterCap: Duration

    public init(delays: [Duration] = standardDelays, jitter: Double = 0.2, retryAfterCap: Duration = .seconds(24 * 3600)) {
        self.delays = delays
        self.jitter = min(max(jitter, 0), 1)
        self.retryAfterCap = retryAfterCap
    }

    /// How long to wait after the `n`th failed attempt (the first delivery is attempt 1), or
    /// `nil` when the schedule is exhausted and the delivery should be given up.
    /// Values of `n` below 1 are treated as 1.
    public func delay(afterFailedAttempt n: Int, using generator: inout some RandomNumberGenerator) -> Duration? {
        let index = max(n, 1) - 1
        guard index < delays.count else { return nil }
        let factor = jitter == 0 ? 1 : Double.random(in: (1 - jitter)...(1 + jitter), using: &generator)
        let milliseconds = (delays[index].secondsValue * factor * 1000).rounded()
        return .milliseconds(Int64(milliseconds))
    }

    /// As `delay(afterFailedAttempt:using:)`, but honouring the receiver's `Retry-After` when it
    /// asks for a longer wait (capped at `retryAfterCap`). A `Retry-After` does not extend the
    /// schedule: once it is exhausted the delivery is given up.
    public func delay(
        afterFailedAttempt n: Int,
        retryAfter: Duration?,
        using generator: inout some RandomNumberGenerator
    ) -> Duration? {
        guard let scheduled = delay(afterFailedAttempt: n, using: &generator) else { return nil }
        guard let retryAfter, retryAfter > .zero else { return scheduled }
        return max(scheduled, min(retryAfter, retryAfterCap))
    }
}
