import FerryCore
import Foundation

/// A fixed clock and stored responses for the cache suites.
enum CacheFixture {
    /// 2023-11-14 22:13:20 UTC, the moment every stored response below arrived.
    static let t0 = Date(timeIntervalSince1970: 1_700_000_000)
    static let url = "https://example.com/resource"

    static func at(_ seconds: TimeInterval) -> Date {
        t0.addingTimeInterval(seconds)
    }

    /// IMF-fixdate for `seconds` after `t0`.
    static func httpDate(_ seconds: TimeInterval) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: at(seconds))
    }

    static func request(_ headers: [String: String] = [:], method: String = "GET", url: String = url) -> TransferRequest {
        TransferRequest(url: url, httpMethod: method, allHTTPHeaderFields: headers)
    }

    /// A response that arrived at `t0` (sent `delay` seconds earlier) with `fields`; a `Date`
    /// of `t0` is added unless `fields` has one or `dated` is false.
    static func entry(
        _ fields: [(String, String)],
        status: Int = 200,
        request: TransferRequest = request(),
        delay: TimeInterval = 0,
        dated: Bool = true
    ) -> CachedResponse {
        var fields = fields
        if dated, !fields.contains(where: { $0.0.lowercased() == "date" }) {
            fields.insert(("Date", httpDate(0)), at: 0)
        }
        return CachedResponse(
            url: request.url, request: request,
            head: ResponseHead(statusCode: status, fields: fields.map { (name: $0.0, value: $0.1) }),
            requestTime: at(-delay), responseTime: t0, bodyKey: "body-1", bodySize: 42
        )
    }
}
