import FerryCore
import Foundation
import Testing

@Suite("304 merging, invalidation and cache keys (RFC 9111 §4.3.4, §4.4)")
struct CacheRevalidationTests {
    private func head(_ status: Int, _ fields: [(String, String)]) -> ResponseHead {
        ResponseHead(statusCode: status, fields: fields.map { (name: $0.0, value: $0.1) })
    }

    @Test("a 304 updates the stored fields in place, except the body's own")
    func merge() throws {
        let stored = CacheFixture.entry([
            ("Date", CacheFixture.httpDate(0)), ("ETag", "\"v1\""), ("Content-Length", "100"), ("Content-Type", "text/plain"),
            ("Cache-Control", "max-age=60"), ("X-A", "1"), ("X-A", "2"), ("Content-Encoding", "gzip"),
        ])
        let notModified = head(304, [
            ("Date", CacheFixture.httpDate(600)), ("ETag", "\"v1\""), ("Cache-Control", "max-age=120"), ("Content-Length", "0"),
            ("x-a", "3"), ("X-New", "y"), ("Connection", "close, X-Hop"), ("X-Hop", "z"), ("Keep-Alive", "timeout=5"),
            ("Content-Encoding", "identity"),
        ])
        let merged = try #require(CacheRevalidation.merge(
            stored: stored, notModified: notModified, requestTime: CacheFixture.at(599), now: CacheFixture.at(600)
        ))
        #expect(merged.headerFields.map { "\($0.name): \($0.value)" } == [
            "Date: \(CacheFixture.httpDate(600))", "ETag: \"v1\"", "Content-Length: 100", "Content-Type: text/plain",
            "Cache-Control: max-age=120", "x-a: 3", "Content-Encoding: gzip", "X-New: y",
        ])
        #expect(merged.requestTime == CacheFixture.at(599))
        #expect(merged.responseTime == CacheFixture.at(600))
        #expect(merged.bodyKey == stored.bodyKey)
        #expect(merged.bodySize == stored.bodySize)
        // Stale before, fresh again for two minutes after.
        #expect(!CacheFreshness.isFresh(stored, now: CacheFixture.at(600)))
        #expect(CacheFreshness.isFresh(merged, now: CacheFixture.at(700)))
        #expect(CacheLookup.decide(policy: .useProtocolCachePolicy, request: CacheFixture.request(), entry: merged, now: CacheFixture.at(700)) == .useCached)
    }

    @Test("a 304 must select the stored response by its validators", arguments: [
        // (stored validators, 304 validators, selected)
        ([("ETag", "\"v1\"")], [("ETag", "\"v1\"")], true),
        ([("ETag", "\"v1\"")], [("ETag", "W/\"v1\"")], true),  // weak comparison
        ([("ETag", "W/\"v1\"")], [("ETag", "W/\"v1\"")], true),
        ([("ETag", "\"v1\"")], [("ETag", "\"v2\"")], false),
        ([], [("ETag", "\"v1\"")], false),
        ([("ETag", "\"v1\"")], [], true),  // no validators in the 304: the lone entry
        ([("Last-Modified", CacheFixture.httpDate(-60))], [("Last-Modified", CacheFixture.httpDate(-60))], true),
        ([("Last-Modified", CacheFixture.httpDate(-60))], [("Last-Modified", CacheFixture.httpDate(-30))], false),
        ([], [("Last-Modified", CacheFixture.httpDate(-30))], true),
    ] as [([(String, String)], [(String, String)], Bool)])
    func selection(storedFields: [(String, String)], notModifiedFields: [(String, String)], selected: Bool) {
        let stored = CacheFixture.entry(storedFields)
        let merged = CacheRevalidation.merge(
            stored: stored, notModified: head(304, notModifiedFields), requestTime: CacheFixture.at(10), now: CacheFixture.at(11)
        )
        #expect((merged != nil) == selected)
    }

    @Test("unsafe methods that succeed invalidate their target", arguments: [
        // (method, status, response fields, invalidated keys)
        ("POST", 200, [], ["GET https://example.com/resource"]),
        ("put", 204, [], ["GET https://example.com/resource"]),
        ("DELETE", 302, [], ["GET https://example.com/resource"]),
        ("PATCH", 200, [], ["GET https://example.com/resource"]),
        ("PURGE", 200, [], ["GET https://example.com/resource"]),  // any unknown method is unsafe
        ("POST", 404, [], []),  // an error changes nothing
        ("POST", 500, [], []),
        ("GET", 200, [], []),
        ("HEAD", 200, [], []),
        ("OPTIONS", 200, [], []),
        ("POST", 201, [("Location", "/items/7"), ("Content-Location", "https://EXAMPLE.com/resource?v=2#x")], [
            "GET https://example.com/resource", "GET https://example.com/items/7", "GET https://example.com/resource?v=2",
        ]),
        ("POST", 303, [("Location", "https://other.example/x")], ["GET https://example.com/resource"]),  // another origin
        ("POST", 303, [("Location", "http://example.com/x")], ["GET https://example.com/resource"]),  // another scheme
        ("POST", 303, [("Location", "resource")], ["GET https://example.com/resource"]),  // no duplicates
    ] as [(String, Int, [(String, String)], [String])])
    func invalidation(method: String, status: Int, fields: [(String, String)], keys: [String]) {
        #expect(CacheInvalidation.invalidatedKeys(method: method, requestURL: CacheFixture.url, response: head(status, fields)) == keys)
    }

    @Test("cache keys", arguments: [
        ("https://example.com/a", "GET", "GET https://example.com/a"),
        ("https://example.com/a#fragment", "get", "GET https://example.com/a"),
        ("HTTPS://Example.COM/Path/A", "GET", "GET https://example.com/Path/A"),  // the path keeps its case
        ("http://example.com:80/a", "GET", "GET http://example.com/a"),
        ("https://example.com:443", "GET", "GET https://example.com/"),
        ("https://example.com:8443/a?b=c#d", "GET", "GET https://example.com:8443/a?b=c"),
        ("https://example.com?q=1", "GET", "GET https://example.com/?q=1"),
        ("http://User:Pw@Example.com/", "GET", "GET http://User:Pw@example.com/"),
        ("http://[::1]:80/x", "GET", "GET http://[::1]/x"),
        ("https://example.com/a?x#", "HEAD", "HEAD https://example.com/a?x"),
    ])
    func keys(url: String, method: String, key: String) {
        #expect(CacheKey.make(for: url, method: method) == key)
    }
}
