import FerryCore
import Foundation
import Testing

@Suite("Cookie dates (RFC 6265 §5.1.1)")
struct CookieDateTests {
    @Test("dates servers send, in every form the algorithm reads", arguments: [
        ("Wed, 09 Jun 2021 10:18:14 GMT", 1_623_233_894.0),  // RFC 6265 §3.1's example
        ("Sun, 06 Nov 1994 08:49:37 GMT", 784_111_777),  // IMF-fixdate
        ("Sunday, 06-Nov-94 08:49:37 GMT", 784_111_777),  // RFC 850, two-digit year
        ("Sun Nov  6 08:49:37 1994", 784_111_777),  // asctime
        ("Thu, 10 Apr 1980 16:33:12 GMT", 324_232_392),
        ("Thu Apr 10 16:33:12 1980 GMT", 324_232_392),
        ("2021 Jun 09 10:18:14", 1_623_233_894),  // any order
        ("9 June 2021 10:18:14", 1_623_233_894),  // a month is its first three letters
        ("wed, 09 JUN 2021 10:18:14 gmt", 1_623_233_894),  // case-insensitive
        ("Wed, 09 Jun 2021 10:18:14.123 GMT", 1_623_233_894),  // "." is a delimiter
        ("Mon, 01-Jan-2001 2:3:4 GMT", 978_314_584),  // one-digit time fields
        ("Thu, 01 Jan 1970 00:00:00 GMT", 0),
        ("01-Jan-69 00:00:00", 3_124_224_000),  // 00–69 → 20xx
        ("01-Jan-70 00:00:00", 0),  // 70–99 → 19xx
        ("01 Jan 00 00:00:00", 946_684_800),
        ("Fri, 31 Dec 99 23:59:59 GMT", 946_684_799),
        ("29 Feb 2024 12:00:00", 1_709_208_000),  // a leap day
        ("1 Jan 1601 00:00:00", -11_644_473_600),  // the earliest year allowed
    ])
    func parses(text: String, seconds: Double) throws {
        let date = try #require(CookieDate.parse(text))
        #expect(date.timeIntervalSince1970 == seconds)
    }

    @Test("what the algorithm refuses", arguments: [
        "",
        "0",
        "-1",
        "Thu, 10 Apr 1980",  // no time
        "12:00:00 10 1980",  // no month
        "Apr 1980 12:00:00",  // no day of month
        "Thu, 10 Apr 1980 24:00:00 GMT",  // hour > 23
        "Thu, 10 Apr 1980 23:60:00 GMT",  // minute > 59
        "Thu, 10 Apr 1980 23:59:60 GMT",  // second > 59
        "Thu, 32 Apr 1980 12:00:00 GMT",  // day > 31
        "Thu, 00 Apr 1980 12:00:00 GMT",  // day < 1
        "29 Feb 2023 12:00:00",  // no such date
        "31 Apr 2024 12:00:00",
        "31 Dec 1600 23:59:59",  // year < 1601
        "1 Jan 999 00:00:00",  // three digits are a year < 1601
        "1 Jan 10000 00:00:00",  // five digits are no year
        "Thu, 10 Apr 1980 123:00:00 GMT",  // three-digit hour
    ])
    func refuses(text: String) {
        #expect(CookieDate.parse(text) == nil)
    }

    @Test("HTTP-date uses the same reading")
    func httpDate() {
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT")?.timeIntervalSince1970 == 784_111_777)
        #expect(HTTPDate.parse("0") == nil)
    }
}
