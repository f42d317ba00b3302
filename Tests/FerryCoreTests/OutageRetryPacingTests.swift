import Testing

@testable import FerryCore

@Suite("OutageRetryPacing")
struct OutageRetryPacingTests {
    @Test("pauses double from 10 ms to at most 2 s")
    func pausesAreBounded() {
        var pacing = OutageRetryPacing()
        let start = ContinuousClock.now
        let pauses: [Duration] = (0..<12).map { _ in pacing.failed(at: start).pause }
        #expect(pauses.prefix(4) == [.milliseconds(10), .milliseconds(20), .milliseconds(40), .milliseconds(80)])
        #expect(pauses.suffix(4).allSatisfy { $0 == .seconds(2) })
        #expect(pauses.allSatisfy { $0 <= .seconds(2) })
    }

    @Test("the first failure is logged, then one line per interval counting the tries in between")
    func logIsRateLimited() {
        var pacing = OutageRetryPacing(logInterval: .seconds(30))
        let start = ContinuousClock.now
        #expect(pacing.failed(at: start).log == .init(failedTries: 1, failedInAll: 1))
        for second in 1..<30 {
            #expect(pacing.failed(at: start + .seconds(second)).log == nil)
        }
        #expect(pacing.failed(at: start + .seconds(30)).log == .init(failedTries: 30, failedInAll: 31))
        #expect(pacing.failed(at: start + .seconds(31)).log == nil)
        #expect(pacing.failures == 32)
    }
}
