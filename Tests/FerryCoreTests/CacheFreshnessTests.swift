import FerryCore
import Foundation
import Testing

@Suite("Age and freshness (RFC 9111 §4.2)")
struct CacheFreshnessTests {
    @Test("current_age: Age, apparent age, response delay, resident time", arguments: [
        // (fields, request delay, seconds since arrival, expected age)
        ([], 0, 10, 10.0),
        ([], 2, 10, 12),  // the round trip counts
        ([("Date", CacheFixture.httpDate(-5))], 0, 10, 15),  // apparent age from Date
        ([("Date", CacheFixture.httpDate(30))], 0, 10, 10),  // a server clock ahead is not a negative age
        ([("Age", "100")], 2, 10, 112),  // corrected Age value
        ([("Date", CacheFixture.httpDate(-20)), ("Age", "3")], 0, 10, 30),  // the larger of the two
        ([("Age", "abc")], 0, 10, 10),  // invalid: ignored
        ([("Age", "99999999999")], 0, 0, 2_147_483_648),
        ([], 0, 0, 0),
    ] as [([(String, String)], TimeInterval, TimeInterval, TimeInterval)])
    func age(fields: [(String, String)], delay: TimeInterval, elapsed: TimeInterval, expected: TimeInterval) {
        let entry = CacheFixture.entry(fields, delay: delay)
        #expect(CacheFreshness.age(of: entry, now: CacheFixture.at(elapsed)) == expected)
    }

    @Test("age without a Date field uses the arrival time")
    func undated() {
        let entry = CacheFixture.entry([], dated: false)
        #expect(CacheFreshness.age(of: entry, now: CacheFixture.at(7)) == 7)
    }

    @Test("freshness lifetime for a private cache", arguments: [
        // (status, fields, expected lifetime)
        (200, [("Cache-Control", "max-age=60")], 60.0),
        (200, [("Cache-Control", "max-age=60, s-maxage=600")], 60),  // s-maxage ignored
        (200, [("Cache-Control", "s-maxage=600")], 0),
        (200, [("Cache-Control", "max-age=60"), ("Expires", CacheFixture.httpDate(3600))], 60),  // max-age beats Expires
        (200, [("Expires", CacheFixture.httpDate(3600))], 3600),
        (200, [("Date", CacheFixture.httpDate(-100)), ("Expires", CacheFixture.httpDate(3600))], 3700),  // relative to Date
        (200, [("Expires", CacheFixture.httpDate(-10))], 0),  // already past
        (200, [("Expires", "0")], 0),  // invalid: already expired
        (200, [("Expires", CacheFixture.httpDate(3600)), ("Expires", CacheFixture.httpDate(7200))], 0),  // conflicting
        (200, [("Cache-Control", "max-age=abc"), ("Expires", CacheFixture.httpDate(3600))], 0),  // invalid max-age
        (200, [("Last-Modified", CacheFixture.httpDate(-5 * 86_400))], 43_200),  // 10% of five days
        (200, [("Last-Modified", CacheFixture.httpDate(-100 * 86_400))], 86_400),  // capped at a day
        (200, [("Last-Modified", CacheFixture.httpDate(60))], 0),  // modified "after" Date
        (404, [("Last-Modified", CacheFixture.httpDate(-1_000))], 100),
        (302, [("Last-Modified", CacheFixture.httpDate(-1_000))], 0),  // not heuristically cacheable…
        (302, [("Cache-Control", "public"), ("Last-Modified", CacheFixture.httpDate(-1_000))], 100),  // …unless public
        (200, [("Last-Modified", "garbage")], 0),
        (200, [], 0),
    ] as [(Int, [(String, String)], TimeInterval)])
    func lifetime(status: Int, fields: [(String, String)], expected: TimeInterval) {
        let entry = CacheFixture.entry(fields, status: status)
        #expect(CacheFreshness.freshnessLifetime(of: entry) == expected)
    }

    @Test("Expires without Date counts from the arrival time")
    func expiresUndated() {
        let entry = CacheFixture.entry([("Expires", CacheFixture.httpDate(600))], dated: false)
        #expect(CacheFreshness.freshnessLifetime(of: entry) == 600)
    }

    @Test("fresh while the lifetime exceeds the age", arguments: [
        (0.0, true), (59, true), (60, false), (61, false),
    ])
    func fresh(elapsed: TimeInterval, isFresh: Bool) {
        let entry = CacheFixture.entry([("Cache-Control", "max-age=60")])
        #expect(CacheFreshness.isFresh(entry, now: CacheFixture.at(elapsed)) == isFresh)
    }
}
