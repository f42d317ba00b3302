import FerryCore
import Foundation
import Testing

@Suite("Set-Cookie parsing (RFC 6265 §5.2, §5.3)")
struct CookieParserTests {
    let now = Date(timeIntervalSince1970: 1_700_000_000)
    let https = CookieURL(scheme: "https", host: "www.example.com", path: "/docs/page.html")
    let http = CookieURL(scheme: "http", host: "www.example.com", path: "/docs/page.html")

    private func parse(_ header: String, from url: CookieURL? = nil) -> Cookie? {
        SetCookieParser.parse(header, requestURL: url ?? https, now: now)
    }

    @Test("a bare cookie is a host-only session cookie on the default path")
    func bare() throws {
        let cookie = try #require(parse("SID=31d4d96e407aad42"))
        #expect(cookie == Cookie(
            name: "SID", value: "31d4d96e407aad42", domain: "www.example.com", hostOnly: true, path: "/docs",
            creationTime: now
        ))
        #expect(cookie.isSessionCookie)
    }

    @Test("name and value split at the first '=', trimmed; attributes case-insensitive")
    func nameValue() throws {
        let cookie = try #require(parse("  lang = en=US ; PATH=/ ; secure; HTTPONLY; SameSite=Lax"))
        #expect(cookie.name == "lang")
        #expect(cookie.value == "en=US")
        #expect(cookie.path == "/")
        #expect(cookie.secure)
        #expect(cookie.httpOnly)
        #expect(cookie.sameSite == .lax)
        #expect(try #require(parse("a=")).value == "")
        #expect(try #require(parse("a=\"quoted\"")).value == "\"quoted\"")
    }

    @Test("strings that must be ignored", arguments: [
        "novalue",  // no "="
        "=value",  // empty name
        " =value",
        "",
        ";a=b",
        "a=b\u{0}c",  // control characters
        "a\u{7}=b",
    ])
    func ignored(header: String) {
        #expect(parse(header) == nil)
    }

    @Test("name and value together may take 4096 bytes, no more")
    func sizeLimit() {
        let name = "n"
        #expect(parse("\(name)=\(String(repeating: "v", count: 4095))") != nil)
        #expect(parse("\(name)=\(String(repeating: "v", count: 4096))") == nil)
    }

    @Test("Max-Age and Expires", arguments: [
        ("a=b; Max-Age=60", 1_700_000_060.0 as Double?),
        ("a=b; Expires=Wed, 09 Jun 2021 10:18:14 GMT", 1_623_233_894),
        ("a=b; Max-Age=60; Expires=Wed, 09 Jun 2021 10:18:14 GMT", 1_700_000_060),  // Max-Age wins…
        ("a=b; Expires=Wed, 09 Jun 2021 10:18:14 GMT; Max-Age=60", 1_700_000_060),  // …in either order
        ("a=b; Max-Age=60; Max-Age=120", 1_700_000_120),  // the last one counts
        ("a=b; Max-Age=abc", nil),  // ignored: a session cookie
        ("a=b; Max-Age=+60", nil),
        ("a=b; Max-Age=6 0", nil),
        ("a=b; Max-Age=", nil),
        ("a=b; Expires=not a date", nil),
        ("a=b; Expires=Wed, 09 Jun 2021 10:18:14 GMT; Expires=garbage", 1_623_233_894),  // a bad one is ignored
        ("a=b; Max-Age=99999999999999999999999", Date.distantFuture.timeIntervalSince1970),
    ])
    func expiry(header: String, expected: Double?) throws {
        let cookie = try #require(parse(header))
        #expect(cookie.expiresAt?.timeIntervalSince1970 == expected)
    }

    @Test("Max-Age of zero or less expires the cookie at once", arguments: ["a=b; Max-Age=0", "a=b; Max-Age=-1", "a=b; Max-Age=-99999999999999999999999"])
    func expireNow(header: String) throws {
        let cookie = try #require(parse(header))
        #expect(cookie.isExpired(at: now))
    }

    @Test("Domain", arguments: [
        // (request host, Set-Cookie, stored domain or nil when ignored, host-only)
        ("www.example.com", "a=b; Domain=example.com", "example.com" as String?, false),
        ("www.example.com", "a=b; Domain=.example.com", "example.com", false),  // leading dot dropped
        ("www.example.com", "a=b; Domain=EXAMPLE.com", "example.com", false),
        ("www.example.com", "a=b; Domain=www.example.com", "www.example.com", false),
        ("www.example.com", "a=b; Domain=other.com", nil, false),  // does not domain-match
        ("www.example.com", "a=b; Domain=sub.www.example.com", nil, false),
        ("www.example.com", "a=b; Domain=ample.com", nil, false),
        ("www.example.com", "a=b; Domain=com", nil, false),  // a public suffix
        ("www.example.com", "a=b; Domain=.com", nil, false),
        ("www.example.com", "a=b; Domain=example.com.", nil, false),  // trailing dot: no match
        ("www.example.com", "a=b; Domain=", "www.example.com", true),  // empty: ignored
        ("www.example.com", "a=b; Domain=example.com; Domain=", "example.com", false),  // …keeping the earlier one
        ("www.example.com", "a=b; Domain=other.com; Domain=example.com", "example.com", false),  // the last wins
        ("localhost", "a=b; Domain=localhost", "localhost", true),  // the suffix is the host itself
        ("192.168.0.1", "a=b; Domain=192.168.0.1", "192.168.0.1", true),  // an IP only host-only
        ("192.168.0.1", "a=b; Domain=168.0.1", nil, false),
        ("192.168.0.1", "a=b", "192.168.0.1", true),
        ("WWW.Example.COM", "a=b", "www.example.com", true),
    ])
    func domain(host: String, header: String, domain: String?, hostOnly: Bool) {
        let cookie = parse(header, from: CookieURL(scheme: "https", host: host, path: "/"))
        #expect(cookie?.domain == domain)
        if let cookie { #expect(cookie.hostOnly == hostOnly) }
    }

    @Test("Path", arguments: [
        ("a=b; Path=/", "/"),
        ("a=b; Path=/accounts", "/accounts"),
        ("a=b; Path=accounts", "/docs"),  // not starting with "/": the default-path
        ("a=b; Path=", "/docs"),
        ("a=b; Path=/x; Path=", "/docs"),  // the last Path counts, even when it means default
        ("a=b", "/docs"),
    ])
    func path(header: String, expected: String) {
        #expect(parse(header)?.path == expected)
    }

    @Test("Secure cookies come only from secure URLs (RFC 6265bis)")
    func secureOrigin() {
        #expect(parse("a=b; Secure", from: https)?.secure == true)
        #expect(parse("a=b; Secure", from: http) == nil)
        #expect(parse("a=b; Secure", from: CookieURL(scheme: "http", host: "localhost", path: "/")) == nil)
        #expect(parse("a=b", from: http) != nil)
    }

    @Test("__Secure- and __Host- prefixes (RFC 6265bis)", arguments: [
        ("__Secure-id=1; Secure", true),
        ("__Secure-id=1", false),
        ("__secure-id=1", false),  // case-insensitive
        ("__Host-id=1; Secure; Path=/", true),
        ("__Host-id=1; Secure; Path=/; Domain=example.com", false),  // must be host-only
        ("__Host-id=1; Secure; Path=/docs", false),  // must be "/"
        ("__Host-id=1; Path=/", false),  // must be Secure
    ])
    func prefixes(header: String, accepted: Bool) {
        #expect((parse(header) != nil) == accepted)
    }

    @Test("an attribute value longer than 1024 bytes is ignored, not the cookie")
    func longAttribute() throws {
        let cookie = try #require(parse("a=b; Path=/\(String(repeating: "x", count: 1024))"))
        #expect(cookie.path == "/docs")
    }

    @Test("SameSite is kept as given, unknown values dropped", arguments: [
        ("a=b; SameSite=Strict", Cookie.SameSitePolicy.strict as Cookie.SameSitePolicy?),
        ("a=b; SameSite=none", Cookie.SameSitePolicy.noRestriction),
        ("a=b; SameSite=bogus", nil),
        ("a=b", nil),
    ])
    func sameSite(header: String, expected: Cookie.SameSitePolicy?) {
        #expect(parse(header)?.sameSite == expected)
    }
}
