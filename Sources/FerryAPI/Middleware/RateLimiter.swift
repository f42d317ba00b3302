import Foundation
import Synchronization

/// Per-tenant token buckets for the `requestsPerSecond` quota. Each instance keeps its own
/// buckets, so behind a load balancer a tenant's allowance is the quota per instance.
final class RateLimiter: Sendable {
    private struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    private let buckets = Mutex<[String: Bucket]>([:])

    /// Takes a token for `tenantID`, whose rate is `perSecond` with bursts of two seconds' worth.
    /// Returns nil when the request may go ahead, else how long to wait before retrying.
    func take(tenantID: String, perSecond rate: Double, now: ContinuousClock.Instant = .now) -> Duration? {
        let capacity = max(1, rate * 2)
        return buckets.withLock { buckets in
            var bucket = buckets[tenantID] ?? Bucket(tokens: capacity, updated: now)
            let elapsed = now - bucket.updated
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            bucket.tokens = min(capacity, bucket.tokens + seconds * rate)
            bucket.updated = now
            defer { buckets[tenantID] = bucket }
            guard bucket.tokens >= 1 else {
                return .milliseconds(Int64(((1 - bucket.tokens) / rate * 1000).rounded(.up)))
            }
            bucket.tokens -= 1
            return nil
        }
    }
}
