import FerryCore
import Testing

private func control(_ build: (inout CacheControl) -> Void) -> CacheControl {
    var control = CacheControl()
    build(&control)
    return control
}

@Suite("Cache-Control directives (RFC 9111 §5.2)")
struct CacheControlTests {
    @Test("directives and their arguments", arguments: [
        ("max-age=60", control { $0.maxAge = 60 }),
        ("MAX-AGE=60", control { $0.maxAge = 60 }),
        ("max-age=\"60\"", control { $0.maxAge = 60 }),  // quoted, tolerated
        ("max-age = 60", control { $0.maxAge = 60 }),
        ("max-age=abc", control { $0.maxAge = 0 }),  // invalid: stale
        ("max-age=-1", control { $0.maxAge = 0 }),
        ("max-age", control { $0.maxAge = 0 }),
        ("max-age=99999999999999999999", control { $0.maxAge = 2_147_483_648 }),  // capped at 2^31
        ("max-age=60, max-age=10", control { $0.maxAge = 60 }),  // the first counts
        ("s-maxage=30", control { $0.sharedMaxAge = 30 }),
        ("no-cache", control { $0.noCache = .all }),
        ("no-cache=\"Set-Cookie, X-Foo\"", control { $0.noCache = .fields(["set-cookie", "x-foo"]) }),
        ("no-cache=Set-Cookie", control { $0.noCache = .fields(["set-cookie"]) }),
        ("no-cache=\"a\", no-cache=\"b\"", control { $0.noCache = .fields(["a", "b"]) }),
        ("no-cache=\"a\", no-cache", control { $0.noCache = .all }),
        ("no-cache=\"\"", control { $0.noCache = .all }),
        ("no-store", control { $0.noStore = true }),
        ("private=\"Set-Cookie\", public", control { $0.isPrivate = true; $0.isPublic = true }),
        ("must-revalidate, proxy-revalidate", control { $0.mustRevalidate = true; $0.proxyRevalidate = true }),
        ("must-understand, no-store", control { $0.mustUnderstand = true; $0.noStore = true }),
        ("max-stale", control { $0.maxStale = Int.max }),
        ("max-stale=30", control { $0.maxStale = 30 }),
        ("max-stale=soon", control { _ in }),
        ("min-fresh=20", control { $0.minFresh = 20 }),
        ("only-if-cached", control { $0.onlyIfCached = true }),
        ("public, max-age=31536000, immutable", control { $0.isPublic = true; $0.maxAge = 31_536_000; $0.immutable = true }),
        ("", control { _ in }),
        (" , ,, ;;, =5, x-ext=\"a,b\", max-age=5 ,", control { $0.maxAge = 5 }),  // junk around a directive
        ("community=\"UCI\", no-store", control { $0.noStore = true }),  // an unknown extension
        ("x=\"unterminated, max-age=5", control { _ in }),  // the quote swallows the rest
        ("x=\"esc\\\"aped\", no-store", control { $0.noStore = true }),
    ])
    func parse(value: String, expected: CacheControl) {
        #expect(CacheControl(value) == expected)
    }

    @Test("several field lines combine; Pragma counts only without Cache-Control")
    func fieldLines() {
        #expect(CacheControl(fieldValues: ["no-store", "max-age=5"]) == control { $0.noStore = true; $0.maxAge = 5 })
        #expect(CacheControl(fieldValues: [], pragma: ["no-cache"]).noCache == .all)
        #expect(CacheControl(fieldValues: ["max-age=5"], pragma: ["no-cache"]).noCache == nil)
        #expect(CacheControl(fieldValues: [], pragma: ["x-other"]).noCache == nil)

        let head = ResponseHead(statusCode: 200, fields: [("cache-control", "private"), ("Cache-Control", "max-age=9")])
        #expect(CacheControl(head: head) == control { $0.isPrivate = true; $0.maxAge = 9 })
        let request = TransferRequest(url: "https://example.com/", allHTTPHeaderFields: ["pragma": "no-cache"])
        #expect(CacheControl(request: request).noCache == .all)
    }
}
