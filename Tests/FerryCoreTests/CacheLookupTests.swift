import FerryCore
import Foundation
import Testing

/// The stored entries every cache policy is tried against; all arrived at `t0` and are looked
/// up 120 s later.
enum CacheScenario: String, CaseIterable, Sendable {
    case noEntry
    case fresh
    case staleWithETag
    case staleWithLastModified
    case staleWithoutValidators
    case noCache
    case varyMismatch

    var entry: CachedResponse? {
        switch self {
        case .noEntry:
            nil
        case .fresh:
            CacheFixture.entry([("Cache-Control", "max-age=3600"), ("ETag", "\"v1\"")])
        case .staleWithETag:
            CacheFixture.entry([("Cache-Control", "max-age=60"), ("ETag", "\"v1\"")])
        case .staleWithLastModified:
            CacheFixture.entry([("Cache-Control", "max-age=60"), ("Last-Modified", CacheFixture.httpDate(-86_400))])
        case .staleWithoutValidators:
            CacheFixture.entry([("Cache-Control", "max-age=60")])
        case .noCache:
            CacheFixture.entry([
                ("Cache-Control", "no-cache, max-age=3600"), ("ETag", "W/\"v2\""), ("Last-Modified", CacheFixture.httpDate(-86_400)),
            ])
        case .varyMismatch:
            CacheFixture.entry(
                [("Cache-Control", "max-age=3600"), ("Vary", "Accept-Language"), ("ETag", "\"v1\"")],
                request: CacheFixture.request(["Accept-Language": "fr"])
            )
        }
    }
}

@Suite("Cache or network, by request cache policy (URLRequest.CachePolicy, RFC 9111 §4)")
struct CacheLookupTests {
    let now = CacheFixture.at(120)
    let request = CacheFixture.request(["Accept-Language": "en"])

    static let ifNoneMatch = CachedHeaderField(name: "If-None-Match", value: "\"v1\"")
    static let ifModifiedSince = CachedHeaderField(name: "If-Modified-Since", value: CacheFixture.httpDate(-86_400))

    /// Every policy × every scenario.
    static let expected: [RequestCachePolicy: [CacheScenario: CacheDecision]] = [
        .useProtocolCachePolicy: [
            .noEntry: .fetch,
            .fresh: .useCached,
            .staleWithETag: .revalidate(conditionalHeaders: [ifNoneMatch]),
            .staleWithLastModified: .revalidate(conditionalHeaders: [ifModifiedSince]),
            .staleWithoutValidators: .fetch,
            .noCache: .revalidate(conditionalHeaders: [
                CachedHeaderField(name: "If-None-Match", value: "W/\"v2\""), ifModifiedSince,
            ]),
            .varyMismatch: .fetch,
        ],
        .reloadIgnoringLocalCacheData: Dictionary(uniqueKeysWithValues: CacheScenario.allCases.map { ($0, .fetch) }),
        .reloadIgnoringLocalAndRemoteCacheData: Dictionary(uniqueKeysWithValues: CacheScenario.allCases.map { ($0, .fetch) }),
        .returnCacheDataElseLoad: [
            .noEntry: .fetch,
            .fresh: .useCached,
            .staleWithETag: .useCached,  // however stale, as URLSession does
            .staleWithLastModified: .useCached,
            .staleWithoutValidators: .useCached,
            .noCache: .useCached,
            .varyMismatch: .fetch,
        ],
        .returnCacheDataDontLoad: [
            .noEntry: .failNotCached,
            .fresh: .useCached,
            .staleWithETag: .useCached,
            .staleWithLastModified: .useCached,
            .staleWithoutValidators: .useCached,
            .noCache: .useCached,
            .varyMismatch: .failNotCached,
        ],
        .reloadRevalidatingCacheData: [
            .noEntry: .fetch,
            .fresh: .revalidate(conditionalHeaders: [ifNoneMatch]),  // even when fresh
            .staleWithETag: .revalidate(conditionalHeaders: [ifNoneMatch]),
            .staleWithLastModified: .revalidate(conditionalHeaders: [ifModifiedSince]),
            .staleWithoutValidators: .fetch,
            .noCache: .revalidate(conditionalHeaders: [
                CachedHeaderField(name: "If-None-Match", value: "W/\"v2\""), ifModifiedSince,
            ]),
            .varyMismatch: .fetch,
        ],
    ]

    @Test("policy × stored entry", arguments: RequestCachePolicy.allCases, CacheScenario.allCases)
    func matrix(policy: RequestCachePolicy, scenario: CacheScenario) throws {
        let expected = try #require(Self.expected[policy]?[scenario])
        #expect(CacheLookup.decide(policy: policy, request: request, entry: scenario.entry, now: now) == expected)
    }

    @Test("the URLSession error for returnCacheDataDontLoad without an entry is -1009")
    func notCachedError() {
        #expect(CacheLookup.notCachedError.rawValue == -1009)
    }

    @Test("request directives under useProtocolCachePolicy", arguments: [
        // (request fields, stored response fields, decision) — looked up 120 s after arrival
        (["Cache-Control": "no-cache"], [("Cache-Control", "max-age=3600"), ("ETag", "\"v1\"")], CacheDecision.revalidate(conditionalHeaders: [CacheLookupTests.ifNoneMatch])),
        (["Pragma": "no-cache"], [("Cache-Control", "max-age=3600"), ("ETag", "\"v1\"")], .revalidate(conditionalHeaders: [CacheLookupTests.ifNoneMatch])),
        (["Cache-Control": "max-age=0"], [("Cache-Control", "max-age=3600"), ("ETag", "\"v1\"")], .revalidate(conditionalHeaders: [CacheLookupTests.ifNoneMatch])),
        (["Cache-Control": "max-age=300"], [("Cache-Control", "max-age=3600")], .useCached),
        (["Cache-Control": "max-age=100"], [("Cache-Control", "max-age=3600")], .fetch),  // older than wanted
        (["Cache-Control": "max-stale=100"], [("Cache-Control", "max-age=60")], .useCached),  // 60 s stale
        (["Cache-Control": "max-stale=30"], [("Cache-Control", "max-age=60")], .fetch),
        (["Cache-Control": "max-stale"], [("Cache-Control", "max-age=1")], .useCached),
        (["Cache-Control": "max-stale"], [("Cache-Control", "max-age=1, must-revalidate")], .fetch),
        (["Cache-Control": "max-stale"], [("Cache-Control", "no-cache")], .fetch),
        (["Cache-Control": "min-fresh=3000"], [("Cache-Control", "max-age=3600")], .useCached),  // 3480 s left
        (["Cache-Control": "min-fresh=3500"], [("Cache-Control", "max-age=3600")], .fetch),
        (["Cache-Control": "only-if-cached"], [("Cache-Control", "max-age=3600")], .useCached),
        (["Cache-Control": "only-if-cached"], [("Cache-Control", "max-age=60"), ("ETag", "\"v1\"")], .failNotCached),
        (["Cache-Control": "no-store"], [("Cache-Control", "max-age=3600")], .useCached),  // forbids storing, not reuse
        (["Range": "bytes=0-9"], [("Cache-Control", "max-age=3600")], .fetch),  // the client's own range
        (["If-None-Match": "\"mine\""], [("Cache-Control", "max-age=3600")], .fetch),  // the client's own condition
        (["if-modified-since": CacheFixture.httpDate(0)], [("Cache-Control", "max-age=3600")], .fetch),
        ([:], [("Cache-Control", "no-cache=\"Set-Cookie\", max-age=3600")], .useCached),  // qualified: reusable
        ([:], [("Cache-Control", "max-age=3600"), ("Vary", "*")], .fetch),
        (["Accept-Encoding": "gzip,   br"], [("Cache-Control", "max-age=3600"), ("Vary", "accept-encoding")], .useCached),
        (["Accept-Encoding": "br, gzip"], [("Cache-Control", "max-age=3600"), ("Vary", "Accept-Encoding")], .fetch),
        ([:], [("Cache-Control", "max-age=3600"), ("Vary", "Accept-Encoding")], .fetch),  // present, then absent
        ([:], [("Cache-Control", "max-age=3600"), ("Vary", "X-Absent")], .useCached),  // absent both times
        ([:], [("Expires", CacheFixture.httpDate(3600))], .useCached),
        ([:], [("Last-Modified", CacheFixture.httpDate(-86_400 * 3))], .useCached),  // heuristic: 7.2 h
        ([:], [("Last-Modified", CacheFixture.httpDate(-600))], .revalidate(conditionalHeaders: [CachedHeaderField(name: "If-Modified-Since", value: CacheFixture.httpDate(-600))])),  // heuristic: 60 s
    ] as [([String: String], [(String, String)], CacheDecision)])
    func requestDirectives(requestFields: [String: String], responseFields: [(String, String)], expected: CacheDecision) {
        let stored = CacheFixture.entry(responseFields, request: CacheFixture.request(["Accept-Encoding": "gzip, br"]))
        let request = CacheFixture.request(requestFields)
        #expect(CacheLookup.decide(policy: .useProtocolCachePolicy, request: request, entry: stored, now: now) == expected)
    }

    @Test("only-if-cached with nothing stored cannot load")
    func onlyIfCachedEmpty() {
        let request = CacheFixture.request(["Cache-Control": "only-if-cached"])
        #expect(CacheLookup.decide(policy: .useProtocolCachePolicy, request: request, entry: nil, now: now) == .failNotCached)
    }

    @Test("only plain GETs use the cache", arguments: [
        (RequestCachePolicy.useProtocolCachePolicy, "POST", CacheDecision.fetch),
        (.returnCacheDataElseLoad, "HEAD", .fetch),
        (.returnCacheDataDontLoad, "POST", .failNotCached),
        (.returnCacheDataDontLoad, "GET", .useCached),
    ])
    func methods(policy: RequestCachePolicy, method: String, expected: CacheDecision) {
        let stored = CacheFixture.entry([("Cache-Control", "max-age=3600")])
        let request = CacheFixture.request(method: method)
        #expect(CacheLookup.decide(policy: policy, request: request, entry: stored, now: now) == expected)
    }

    @Test("an entry for another URL is never used")
    func otherURL() {
        let stored = CacheFixture.entry([("Cache-Control", "max-age=3600")], request: CacheFixture.request(url: "https://example.com/other"))
        #expect(CacheLookup.decide(policy: .returnCacheDataDontLoad, request: request, entry: stored, now: now) == .failNotCached)
        let sameButFragment = CacheFixture.request(url: "https://EXAMPLE.com:443/resource#top")
        let original = CacheFixture.entry([("Cache-Control", "max-age=3600")])
        #expect(CacheLookup.decide(policy: .useProtocolCachePolicy, request: sameButFragment, entry: original, now: now) == .useCached)
    }

    @Test("reloadRevalidatingCacheData trusts a fresh immutable response (RFC 8246)")
    func immutable() {
        let stored = CacheFixture.entry([("Cache-Control", "max-age=3600, immutable"), ("ETag", "\"v1\"")])
        #expect(CacheLookup.decide(policy: .reloadRevalidatingCacheData, request: request, entry: stored, now: now) == .useCached)
        let later = CacheFixture.at(4000)
        #expect(CacheLookup.decide(policy: .reloadRevalidatingCacheData, request: request, entry: stored, now: later)
            == .revalidate(conditionalHeaders: [Self.ifNoneMatch]))
    }

    @Test("a reused response carries its Age and not the fields no-cache names")
    func reusedHead() {
        let stored = CacheFixture.entry([
            ("Cache-Control", "max-age=3600, no-cache=\"set-cookie\""), ("Set-Cookie", "a=1"), ("Age", "5"), ("X-Kept", "1"),
        ])
        let head = stored.headForReuse(now: now)
        #expect(head.value(of: "Set-Cookie") == nil)
        #expect(head.values(of: "Age") == ["125"])
        #expect(head.value(of: "X-Kept") == "1")
        #expect(stored.head.value(of: "Set-Cookie") == "a=1")
        let snapshot = stored.responseSnapshot(now: now)
        #expect(snapshot.statusCode == 200)
        #expect(snapshot.url == CacheFixture.url)
    }
}
