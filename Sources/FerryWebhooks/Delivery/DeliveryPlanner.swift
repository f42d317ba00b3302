import FerryCore
import FerryStore
import Foundation

/// What an attempt found, as far as planning the next step is concerned.
struct AttemptOutcome: Sendable, Equatable {
    /// nil when the endpoint never answered (refused, unreachable, timed out).
    var statusCode: Int?
    /// The receiver's `Retry-After`, when it sent one.
    var retryAfter: Duration?

    var isSuccess: Bool { statusCode.map { (200..<300).contains($0) } ?? false }
}

/// Decides what follows an attempt: delivered, retried later (the jittered schedule, or a
/// longer `Retry-After`), given up, and whether the endpoint is healthy, failing or to be
/// disabled. Pure: the time and the randomness are passed in.
struct DeliveryPlanner: Sendable {
    var schedule: WebhookRetrySchedule
    /// An endpoint whose every attempt failed for this long is disabled.
    var disableAfter: Duration

    func plan(
        _ outcome: AttemptOutcome, attemptNumber: Int, isDecision: Bool, failingSince: Date?, now: Date,
        using generator: inout some RandomNumberGenerator
    ) -> DeliveryPlan {
        if outcome.isSuccess {
            return DeliveryPlan(status: .delivered, nextAttemptAt: nil, endpoint: .answering)
        }
        if outcome.statusCode == 410 {
            // Gone: the receiver asks to stop. The delivery waits (due at once) until the tenant
            // enables the endpoint again; a decision has had its moment.
            return DeliveryPlan(
                status: isDecision ? .failed : .pending, nextAttemptAt: now,
                endpoint: .disable(reason: "the endpoint answered 410 Gone")
            )
        }
        let since = failingSince ?? now
        var endpoint = EndpointChange.failing(since: since)
        if now.timeIntervalSince(since) >= disableAfter.secondsValue {
            endpoint = .disable(reason: "every delivery failed for \(Self.describe(disableAfter)) (since \(ISO8601Parsing.string(from: since)))")
        }
        if isDecision {
            return DeliveryPlan(status: .failed, nextAttemptAt: nil, endpoint: endpoint)
        }
        if case .disable = endpoint {
            return DeliveryPlan(status: .pending, nextAttemptAt: now, endpoint: endpoint)
        }
        guard let delay = schedule.delay(afterFailedAttempt: attemptNumber, retryAfter: outcome.retryAfter, using: &generator) else {
            return DeliveryPlan(status: .dead, nextAttemptAt: nil, endpoint: endpoint)
        }
        return DeliveryPlan(status: .pending, nextAttemptAt: now.addingTimeInterval(delay.secondsValue), endpoint: endpoint)
    }

    private static func describe(_ duration: Duration) -> String {
        let seconds = duration.components.seconds
        if seconds % 86400 == 0 { return "\(seconds / 86400) days" }
        if seconds % 3600 == 0 { return "\(seconds / 3600) hours" }
        return "\(seconds) s"
    }
}
