import FerryCore
import Foundation
import Testing

@Suite("What a private cache may store (RFC 9111 §3)")
struct CacheStorabilityTests {
    @Test("methods, statuses and directives", arguments: [
        // (method, status, response fields, request fields, storable)
        ("GET", 200, [], [:], true),
        ("get", 200, [], [:], true),
        ("HEAD", 200, [], [:], false),  // no body to reuse
        ("POST", 200, [("Cache-Control", "max-age=60")], [:], false),
        ("PUT", 200, [], [:], false),
        ("GET", 203, [], [:], true),
        ("GET", 204, [], [:], true),
        ("GET", 300, [], [:], true),
        ("GET", 301, [], [:], true),
        ("GET", 308, [], [:], true),
        ("GET", 404, [], [:], true),
        ("GET", 405, [], [:], true),
        ("GET", 410, [], [:], true),
        ("GET", 414, [], [:], true),
        ("GET", 501, [], [:], true),
        ("GET", 201, [], [:], false),  // not cacheable by default…
        ("GET", 302, [], [:], false),
        ("GET", 500, [], [:], false),
        ("GET", 302, [("Cache-Control", "max-age=60")], [:], true),  // …unless the response says so
        ("GET", 302, [("Expires", "Wed, 15 Nov 2023 00:00:00 GMT")], [:], true),
        ("GET", 500, [("Cache-Control", "public")], [:], true),
        ("GET", 307, [("Cache-Control", "private")], [:], true),  // private caches may keep private responses
        ("GET", 302, [("Cache-Control", "s-maxage=60")], [:], false),  // s-maxage is not for us
        ("GET", 206, [("Cache-Control", "max-age=60")], [:], false),  // no partial content
        ("GET", 304, [("Cache-Control", "max-age=60")], [:], false),
        ("GET", 100, [], [:], false),
        ("GET", 200, [("Cache-Control", "no-store")], [:], false),
        ("GET", 200, [("Cache-Control", "max-age=60, NO-STORE")], [:], false),
        ("GET", 200, [], ["Cache-Control": "no-store"], false),
        ("GET", 200, [("Cache-Control", "no-cache")], [:], true),  // storable, revalidated on use
        ("GET", 200, [("Pragma", "no-cache")], [:], true),
        ("GET", 200, [("Cache-Control", "must-understand, no-store")], [:], true),  // understood status
        ("GET", 299, [("Cache-Control", "must-understand, no-store, max-age=5")], [:], false),
        ("GET", 200, [("Vary", "*")], [:], false),  // could never be reused
        ("GET", 200, [("Vary", "Accept-Encoding, *")], [:], false),
        ("GET", 200, [("Vary", "Accept-Encoding")], [:], true),
        ("GET", 200, [], ["Authorization": "Bearer t"], false),
        ("GET", 200, [("Cache-Control", "max-age=60, private")], ["authorization": "Bearer t"], false),
        ("GET", 200, [("Cache-Control", "public")], ["Authorization": "Bearer t"], true),
        ("GET", 200, [("Cache-Control", "must-revalidate")], ["Authorization": "Bearer t"], true),
        ("GET", 200, [("Cache-Control", "s-maxage=60")], ["Authorization": "Bearer t"], true),
    ] as [(String, Int, [(String, String)], [String: String], Bool)])
    func storable(method: String, status: Int, responseFields: [(String, String)], requestFields: [String: String], expected: Bool) {
        let request = CacheFixture.request(requestFields, method: method)
        let response = ResponseHead(statusCode: status, fields: responseFields.map { (name: $0.0, value: $0.1) })
        #expect(CachePolicy.isStorable(request: request, response: response) == expected)
    }

    @Test("a stored response keeps its fields in order, without connection-specific ones")
    func storedFields() throws {
        let request = CacheFixture.request(["Accept-Language": "en,  fr", "Accept": "*/*"])
        let head = ResponseHead(statusCode: 200, fields: [
            ("Content-Type", "text/plain"), ("Connection", "close, X-Hop"), ("X-Hop", "1"), ("Keep-Alive", "timeout=5"),
            ("Transfer-Encoding", "chunked"), ("Set-Cookie", "a=1"), ("Vary", "accept-language, Accept-Encoding"),
            ("Set-Cookie", "b=2"),
        ])
        let entry = CachedResponse(
            url: CacheFixture.url, request: request, head: head,
            requestTime: CacheFixture.at(-1), responseTime: CacheFixture.t0, bodyKey: "k", bodySize: 3
        )
        #expect(entry.headerFields.map(\.name) == ["Content-Type", "Set-Cookie", "Vary", "Set-Cookie"])
        #expect(entry.varyingRequestHeaders == ["accept-language": "en,fr"])  // normalised; absent stays absent
        #expect(entry.method == "GET")

        let data = try JSONEncoder().encode(entry)
        #expect(try JSONDecoder().decode(CachedResponse.self, from: data) == entry)
    }
}
