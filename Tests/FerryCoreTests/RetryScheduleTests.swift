import Foundation
import Testing

@testable import FerryCore

@Suite("SplitMix64")
struct RetrySplitMix64Tests {
    @Test func matchesTheReferenceSequence() {
        var generator = SplitMix64(seed: 0)
        #expect(generator.next() == 0xE220_A839_7B1D_CDAF)
        #expect(generator.next() == 0x6E78_9E6A_A1B9_65F4)
        #expect(generator.next() == 0x06C4_5D18_8009_454F)
    }

    @Test func sameSeedSameSequence() {
        var a = SplitMix64(seed: 1234)
        var b = SplitMix64(seed: 1234)
        var c = SplitMix64(seed: 1235)
        let first = (0..<5).map { _ in a.next() }
        #expect((0..<5).map { _ in b.next() } == first)
        #expect((0..<5).map { _ in c.next() } != first)
    }
}

@Suite("WebhookRetrySchedule")
struct RetryWebhookScheduleTests {
    private let schedule = WebhookRetrySchedule()
    private let nominalSeconds: [Double] = [5, 300, 1800, 7200, 18000, 36000, 36000]

    private func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    @Test func followsTheStandardScheduleWithinTwentyPercent() throws {
        for seed in UInt64(0)..<200 {
            var generator = SplitMix64(seed: seed)
            for (index, nominal) in nominalSeconds.enumerated() {
                let delay = try #require(schedule.delay(afterFailedAttempt: index + 1, using: &generator))
                #expect(seconds(delay) >= nominal * 0.8 - 0.001 && seconds(delay) <= nominal * 1.2 + 0.001, "attempt \(index + 1): \(delay)")
            }
        }
    }

    @Test func jitterActuallyVaries() throws {
        var generator = SplitMix64(seed: 99)
        let delays = try (0..<50).map { _ in try #require(schedule.delay(afterFailedAttempt: 3, using: &generator)) }
        #expect(Set(delays).count > 40)
        let mean = delays.map(seconds).reduce(0, +) / Double(delays.count)
        #expect(abs(mean - 1800) < 1800 * 0.1)
    }

    @Test func givesUpAfterSevenRetries() {
        var generator = SplitMix64(seed: 1)
        #expect(schedule.delay(afterFailedAttempt: 7, using: &generator) != nil)
        #expect(schedule.delay(afterFailedAttempt: 8, using: &generator) == nil)
        #expect(schedule.delay(afterFailedAttempt: 100, using: &generator) == nil)
    }

    @Test func attemptBelowOneCountsAsTheFirst() throws {
        let exact = WebhookRetrySchedule(jitter: 0)
        var generator = SplitMix64(seed: 1)
        #expect(exact.delay(afterFailedAttempt: 0, using: &generator) == .seconds(5))
        #expect(exact.delay(afterFailedAttempt: -3, using: &generator) == .seconds(5))
    }

    @Test func withoutJitterDelaysAreExact() {
        let exact = WebhookRetrySchedule(jitter: 0)
        var generator = SplitMix64(seed: 1)
        let delays = (1...7).map { exact.delay(afterFailedAttempt: $0, using: &generator) }
        #expect(delays == WebhookRetrySchedule.standardDelays)
    }

    @Test func honoursALongerRetryAfter() {
        let exact = WebhookRetrySchedule(jitter: 0)
        var generator = SplitMix64(seed: 1)
        #expect(exact.delay(afterFailedAttempt: 1, retryAfter: .seconds(3600), using: &generator) == .seconds(3600))
        #expect(exact.delay(afterFailedAttempt: 4, retryAfter: .seconds(60), using: &generator) == .seconds(7200))
        #expect(exact.delay(afterFailedAttempt: 1, retryAfter: nil, using: &generator) == .seconds(5))
        #expect(exact.delay(afterFailedAttempt: 1, retryAfter: .seconds(-10), using: &generator) == .seconds(5))
    }

    @Test func capsRetryAfterAtADay() {
        let exact = WebhookRetrySchedule(jitter: 0)
        var generator = SplitMix64(seed: 1)
        #expect(exact.delay(afterFailedAttempt: 2, retryAfter: .seconds(48 * 3600), using: &generator) == .seconds(24 * 3600))
    }

    @Test func retryAfterDoesNotExtendTheSchedule() {
        var generator = SplitMix64(seed: 1)
        #expect(schedule.delay(afterFailedAttempt: 8, retryAfter: .seconds(60), using: &generator) == nil)
    }
}

@Suite("TransferRetryPolicy")
struct RetryTransferPolicyTests {
    private let policy = TransferRetryPolicy()
    private let now = Date(timeIntervalSince1970: 1_700_000_000)
    private let farDeadline = Date(timeIntervalSince1970: 1_700_000_000 + 604_800)

    @Test func backoffDoublesFromTwoSecondsUpToFiveMinutes() {
        let expected: [Duration] = [.seconds(2), .seconds(4), .seconds(8), .seconds(16), .seconds(32), .seconds(64),
                                    .seconds(128), .seconds(256), .seconds(300), .seconds(300)]
        #expect((1...10).map { policy.nominalDelay(afterFailure: $0) } == expected)
        #expect(policy.nominalDelay(afterFailure: 10_000) == .seconds(300))
        #expect(policy.nominalDelay(afterFailure: 0) == .seconds(2))
    }

    @Test func nextAttemptIsBetweenHalfAndAllOfTheBackoff() throws {
        for seed in UInt64(0)..<100 {
            var generator = SplitMix64(seed: seed)
            for attempt in 1...9 {
                let nominal = Double(policy.nominalDelay(afterFailure: attempt).components.seconds)
                let next = try #require(policy.nextAttempt(afterFailure: attempt, now: now, resourceDeadline: farDeadline, using: &generator))
                let wait = next.timeIntervalSince(now)
                #expect(wait >= nominal / 2 - 0.001 && wait <= nominal + 0.001, "attempt \(attempt): \(wait)")
            }
        }
    }

    @Test func firstRetryComesWithinTwoSeconds() throws {
        var generator = SplitMix64(seed: 5)
        let next = try #require(policy.nextAttempt(afterFailure: 1, now: now, resourceDeadline: farDeadline, using: &generator))
        #expect(next.timeIntervalSince(now) <= 2)
        #expect(next.timeIntervalSince(now) >= 1)
    }

    @Test func stopsAfterTenAttempts() {
        var generator = SplitMix64(seed: 5)
        #expect(policy.nextAttempt(afterFailure: 9, now: now, resourceDeadline: farDeadline, using: &generator) != nil)
        #expect(policy.nextAttempt(afterFailure: 10, now: now, resourceDeadline: farDeadline, using: &generator) == nil)
        #expect(policy.nextAttempt(afterFailure: 11, now: now, resourceDeadline: farDeadline, using: &generator) == nil)
    }

    @Test func neverSchedulesPastTheResourceDeadline() {
        var generator = SplitMix64(seed: 5)
        // The first retry waits at least 1 s, so a deadline half a second away leaves no room.
        #expect(policy.nextAttempt(afterFailure: 1, now: now, resourceDeadline: now.addingTimeInterval(0.5), using: &generator) == nil)
        #expect(policy.nextAttempt(afterFailure: 1, now: now, resourceDeadline: now.addingTimeInterval(-10), using: &generator) == nil)
        // Attempt 9 waits 150–300 s.
        #expect(policy.nextAttempt(afterFailure: 9, now: now, resourceDeadline: now.addingTimeInterval(100), using: &generator) == nil)
        #expect(policy.nextAttempt(afterFailure: 9, now: now, resourceDeadline: now.addingTimeInterval(301), using: &generator) != nil)
    }
}
