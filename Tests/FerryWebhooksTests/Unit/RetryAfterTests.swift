import Foundation
import Testing

@testable import FerryWebhooks

@Suite("Retry-After")
struct RetryAfterTests {
    private let now = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT

    @Test func readsSeconds() {
        #expect(RetryAfter.parse("120", now: now) == .seconds(120))
        #expect(RetryAfter.parse(" 0 ", now: now) == .seconds(0))
        #expect(RetryAfter.parse("-5", now: now) == nil)
    }

    @Test func readsHTTPDates() {
        #expect(RetryAfter.parse("Sun, 06 Nov 1994 08:50:37 GMT", now: now) == .seconds(60))
        #expect(RetryAfter.parse("Sunday, 06-Nov-94 08:51:37 GMT", now: now) == .seconds(120))
        #expect(RetryAfter.parse("Sun Nov  6 08:52:37 1994", now: now) == .seconds(180))
        // A date in the past asks for no wait.
        #expect(RetryAfter.parse("Sun, 06 Nov 1994 08:00:00 GMT", now: now) == .zero)
    }

    @Test func ignoresAnythingElse() {
        for value in ["soon", "", "1.5", "Sun, 06 Nov 1994", String(repeating: "9", count: 40)] {
            #expect(RetryAfter.parse(value, now: now) == nil, "\(value)")
        }
    }
}
