import FerryCore
import Testing

@Suite("Cookie domain and path matching (RFC 6265 §5.1.3, §5.1.4)")
struct CookieDomainPathTests {
    @Test("domain-match", arguments: [
        ("example.com", "example.com", true),
        ("sub.example.com", "example.com", true),
        ("a.b.example.com", "example.com", true),
        ("example.com", "sub.example.com", false),  // a parent never matches a child
        ("notexample.com", "example.com", false),  // a suffix must start at a label
        ("EXAMPLE.com", "example.COM", true),  // case-insensitive
        ("example.com.", "example.com", false),  // trailing dots are significant
        ("example.com", "example.com.", false),
        ("www.example.com.", "example.com.", true),
        ("192.168.0.1", "192.168.0.1", true),  // an IP address matches itself only
        ("10.192.168.0.1", "192.168.0.1", false),
        ("1.2.3.4", "3.4", false),
        ("[::1]", "::1", true),
        ("::1", "1", false),
        ("example.com", "", false),
    ])
    func domainMatch(host: String, domain: String, matches: Bool) {
        #expect(CookieDomain.matches(host: host, domain: domain) == matches)
    }

    @Test("IP addresses are recognised as URL parsers read them", arguments: [
        ("127.0.0.1", true), ("::1", true), ("[fe80::1]", true), ("010.1", true), ("0x7f.0.0.1", true),
        ("1.2.3.4.", true), ("example.com", false), ("123.example", false), ("localhost", false), ("", false),
    ])
    func ipAddress(host: String, isIP: Bool) {
        #expect(CookieDomain.isIPAddress(host) == isIP)
    }

    @Test("public suffixes detectable without a list", arguments: [
        ("com", true), ("localhost", true), (".com", true), ("example.com", false), ("co.uk", false),
    ])
    func publicSuffix(domain: String, isSuffix: Bool) {
        #expect(CookieDomain.isPublicSuffix(domain) == isSuffix)
    }

    @Test("default-path", arguments: [
        ("", "/"), ("/", "/"), ("relative/path", "/"), ("/docs", "/"), ("/docs/", "/docs"),
        ("/docs/page.html", "/docs"), ("/a/b/c", "/a/b"), ("//", "/"),
    ])
    func defaultPath(uriPath: String, expected: String) {
        #expect(CookiePath.defaultPath(for: uriPath) == expected)
    }

    @Test("path-match", arguments: [
        ("/docs", "/docs", true),
        ("/docs/", "/docs", true),
        ("/docs/web", "/docs", true),
        ("/docs/web/page", "/docs/", true),
        ("/docsets", "/docs", false),  // a prefix that does not end at a "/"
        ("/Docs", "/docs", false),  // paths are case-sensitive
        ("/", "/docs", false),
        ("/anything", "/", true),
        ("", "/", true),  // an empty path is "/"
        ("/doc", "/docs", false),
    ])
    func pathMatch(requestPath: String, cookiePath: String, matches: Bool) {
        #expect(CookiePath.matches(requestPath: requestPath, cookiePath: cookiePath) == matches)
    }

    @Test("a request URL's cookie parts")
    func cookieURL() throws {
        let url = try #require(CookieURL(string: "HTTPS://WWW.Example.COM:8443/a/b?q=1#frag"))
        #expect(url == CookieURL(scheme: "https", host: "www.example.com", path: "/a/b"))
        #expect(url.isSecure)
        #expect(CookieURL(string: "http://localhost/")?.isSecure == false)
        #expect(CookieURL(string: "http://127.0.0.1/")?.isSecure == false)
        #expect(CookieURL(string: "not a url") == nil)
        #expect(CookieURL(string: "http://[::1]:8080/x")?.host == "::1")
    }
}
