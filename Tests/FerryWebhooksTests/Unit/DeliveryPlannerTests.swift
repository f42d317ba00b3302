import FerryCore
import FerryStore
import Foundation
import Testing

@testable import FerryWebhooks

@Suite("Delivery planning: the retry schedule on an injected clock")
struct DeliveryPlannerTests {
    private let now = Date(timeIntervalSince1970: 1_700_000_000)
    private let exact = DeliveryPlanner(schedule: WebhookRetrySchedule(jitter: 0), disableAfter: .seconds(5 * 86400))
    private let jittered = DeliveryPlanner(schedule: WebhookRetrySchedule(), disableAfter: .seconds(5 * 86400))

    private func plan(
        _ planner: DeliveryPlanner? = nil, status: Int?, retryAfter: Duration? = nil, attempt: Int = 1,
        isDecision: Bool = false, failingSince: Date? = nil, seed: UInt64 = 7
    ) -> DeliveryPlan {
        var generator = SplitMix64(seed: seed)
        return (planner ?? exact).plan(
            AttemptOutcome(statusCode: status, retryAfter: retryAfter), attemptNumber: attempt, isDecision: isDecision,
            failingSince: failingSince, now: now, using: &generator
        )
    }

    @Test func aTwoHundredDeliversAndHealsTheEndpoint() {
        for status in [200, 202, 204, 299] {
            #expect(plan(status: status, failingSince: now.addingTimeInterval(-3600)) == DeliveryPlan(status: .delivered, nextAttemptAt: nil, endpoint: .answering))
        }
    }

    @Test func failuresFollowTheScheduleFromTheInjectedClock() {
        let expected: [TimeInterval] = [5, 300, 1800, 7200, 18000, 36000, 36000]
        for (index, seconds) in expected.enumerated() {
            let result = plan(status: 500, attempt: index + 1, failingSince: now)
            #expect(result.status == .pending)
            #expect(result.nextAttemptAt == now.addingTimeInterval(seconds), "attempt \(index + 1)")
            #expect(result.endpoint == .failing(since: now))
        }
        #expect(plan(status: 500, attempt: 8).status == .dead)
        #expect(plan(status: 500, attempt: 8).nextAttemptAt == nil)
    }

    @Test func jitterStaysWithinTwentyPercentAndIsReproducible() throws {
        for seed in UInt64(0)..<50 {
            let first = try #require(plan(jittered, status: 503, attempt: 2, seed: seed).nextAttemptAt)
            let wait = first.timeIntervalSince(now)
            #expect(wait >= 240 - 0.001 && wait <= 360 + 0.001)
            #expect(plan(jittered, status: 503, attempt: 2, seed: seed).nextAttemptAt == first)
        }
    }

    @Test func everyKindOfFailureIsRetried() {
        // 3xx (never followed), 4xx, 5xx, and no answer at all.
        for status in [301, 302, 307, 400, 404, 429, 500, 503, nil] {
            let result = plan(status: status)
            #expect(result.status == .pending, "\(String(describing: status))")
            #expect(result.nextAttemptAt == now.addingTimeInterval(5))
        }
    }

    @Test func aLongerRetryAfterIsHonoured() {
        #expect(plan(status: 429, retryAfter: .seconds(120)).nextAttemptAt == now.addingTimeInterval(120))
        #expect(plan(status: 503, retryAfter: .seconds(1), attempt: 2).nextAttemptAt == now.addingTimeInterval(300))
        #expect(plan(status: 503, retryAfter: .seconds(1), attempt: 8).status == .dead)
    }

    @Test func goneDisablesTheEndpointAndKeepsTheDeliveryPending() {
        let result = plan(status: 410, attempt: 3)
        #expect(result.status == .pending)
        #expect(result.nextAttemptAt == now)
        #expect(result.endpoint == .disable(reason: "the endpoint answered 410 Gone"))
    }

    @Test func anEndpointFailingForFiveDaysIsDisabled() {
        let almost = plan(status: 500, failingSince: now.addingTimeInterval(-5 * 86400 + 60))
        #expect(almost.endpoint == .failing(since: now.addingTimeInterval(-5 * 86400 + 60)))
        let since = now.addingTimeInterval(-5 * 86400)
        let result = plan(status: 500, attempt: 2, failingSince: since)
        guard case .disable(let reason) = result.endpoint else {
            Issue.record("not disabled: \(result.endpoint)")
            return
        }
        #expect(reason.contains("5 days"))
        #expect(result.status == .pending)
        #expect(result.nextAttemptAt == now)
    }

    @Test func aDecisionThatFailsIsNeverRetried() {
        let result = plan(status: 500, isDecision: true)
        #expect(result == DeliveryPlan(status: .failed, nextAttemptAt: nil, endpoint: .failing(since: now)))
        #expect(plan(status: nil, isDecision: true).status == .failed)
        #expect(plan(status: 200, isDecision: true).status == .delivered)
        #expect(plan(status: 410, isDecision: true).status == .failed)
    }
}
