import FerryCore
import Foundation
import Testing

@Suite("Cookie storage and retrieval (RFC 6265 §5.3, §5.4)")
struct CookieJarTests {
    let now = Date(timeIntervalSince1970: 1_700_000_000)
    let site = CookieURL(scheme: "https", host: "www.example.com", path: "/")

    private func cookie(_ header: String, from url: CookieURL? = nil, at time: Date? = nil) throws -> Cookie {
        try #require(SetCookieParser.parse(header, requestURL: url ?? site, now: time ?? now))
    }

    private func names(_ jar: CookieJar, _ url: String, at time: Date? = nil) throws -> [String] {
        jar.cookies(for: try #require(CookieURL(string: url)), now: time ?? now).map(\.name)
    }

    @Test("which hosts, paths and schemes receive which cookies", arguments: [
        ("https://www.example.com/", ["domain", "hostOnly", "secure"]),
        ("http://www.example.com/", ["domain", "hostOnly"]),  // Secure stays on https
        ("https://sub.www.example.com/", ["domain"]),  // host-only stays on its host
        ("https://example.com/", ["domain"]),
        ("https://other.example.com/", ["domain"]),
        ("https://notexample.com/", []),
        ("https://www.example.com/docs/x", ["docs", "domain", "hostOnly", "secure"]),
        ("https://www.example.com/docsets", ["domain", "hostOnly", "secure"]),  // /docs does not match /docsets
        ("https://WWW.EXAMPLE.COM/", ["domain", "hostOnly", "secure"]),
    ])
    func retrieval(url: String, expected: [String]) throws {
        var jar = CookieJar()
        jar.store(try cookie("domain=1; Domain=example.com; Path=/"), now: now)
        jar.store(try cookie("hostOnly=1; Path=/", at: now.addingTimeInterval(1)), now: now)
        jar.store(try cookie("secure=1; Secure; Path=/", at: now.addingTimeInterval(2)), now: now)
        jar.store(try cookie("docs=1; Path=/docs", at: now.addingTimeInterval(3)), now: now)
        #expect(try names(jar, url, at: now.addingTimeInterval(10)) == expected)
    }

    @Test("Secure cookies are not sent to plain http on loopback either")
    func loopbackIsNotSecure() throws {
        var jar = CookieJar()
        let local = CookieURL(scheme: "https", host: "127.0.0.1", path: "/")
        jar.store(try cookie("s=1; Secure", from: local), now: now)
        #expect(try names(jar, "https://127.0.0.1/") == ["s"])
        #expect(try names(jar, "http://127.0.0.1/") == [])
    }

    @Test("longest path first, then the earliest created; one header, '; '-separated")
    func order() throws {
        var jar = CookieJar()
        jar.store(try cookie("late=1; Path=/", at: now.addingTimeInterval(2)), now: now)
        jar.store(try cookie("early=1; Path=/", at: now), now: now)
        jar.store(try cookie("deep=1; Path=/a/b"), now: now)
        jar.store(try cookie("mid=1; Path=/a"), now: now)
        let url = CookieURL(scheme: "https", host: "www.example.com", path: "/a/b/c")
        #expect(jar.cookieHeader(for: url, now: now) == "deep=1; mid=1; early=1; late=1")
        #expect(jar.cookieHeader(for: CookieURL(scheme: "https", host: "elsewhere.org", path: "/"), now: now) == nil)
    }

    @Test("same name, domain and path replaces and keeps the creation time")
    func replacement() throws {
        var jar = CookieJar()
        jar.store(try cookie("id=old; Path=/"), now: now)
        let later = now.addingTimeInterval(60)
        jar.store(try cookie("id=new; Path=/; HttpOnly", at: later), now: later)
        #expect(jar.cookies.count == 1)
        #expect(jar.cookies[0].value == "new")
        #expect(jar.cookies[0].httpOnly)
        #expect(jar.cookies[0].creationTime == now)

        // A different path, or a domain cookie of the same name, is another cookie.
        jar.store(try cookie("id=other; Path=/x"), now: later)
        jar.store(try cookie("id=domain; Domain=example.com; Path=/"), now: later)
        #expect(jar.cookies.count == 3)
    }

    @Test("an expired cookie deletes its namesake and is not stored", arguments: [
        "id=; Max-Age=0; Path=/", "id=; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Path=/",
    ])
    func deletion(header: String) throws {
        var jar = CookieJar()
        jar.store(try cookie("id=1; Path=/"), now: now)
        jar.store(try cookie("keep=1; Path=/"), now: now)
        jar.store(try cookie(header), now: now)
        #expect(jar.cookies.map(\.name) == ["keep"])
    }

    @Test("expiry by time: hidden at once, removed on request")
    func expiry() throws {
        var jar = CookieJar()
        jar.store(try cookie("short=1; Max-Age=60; Path=/"), now: now)
        jar.store(try cookie("session=1; Path=/"), now: now)
        let later = now.addingTimeInterval(60)
        #expect(try names(jar, "https://www.example.com/", at: later) == ["session"])
        #expect(jar.cookies.count == 2)
        jar.removeExpired(now: later)
        #expect(jar.cookies.map(\.name) == ["session"])
        jar.removeAll()
        #expect(jar.cookies.isEmpty)
    }

    @Test("sending records the access time")
    func access() throws {
        var jar = CookieJar()
        jar.store(try cookie("a=1; Path=/"), now: now)
        jar.store(try cookie("b=1; Path=/other"), now: now)
        let later = now.addingTimeInterval(5)
        jar.recordAccess(for: site, now: later)
        #expect(jar.cookies.map(\.lastAccessTime) == [later, now])
    }

    @Test("50 per domain: expired ones go first, then the least recently used")
    func perDomainLimit() throws {
        var jar = CookieJar()
        for index in 0..<50 {
            let time = now.addingTimeInterval(Double(index))
            jar.store(try cookie("c\(index)=1; Path=/\(index == 7 ? "; Max-Age=10" : "")", at: time), now: time)
        }
        let later = now.addingTimeInterval(100)
        jar.store(try cookie("new1=1; Path=/", at: later), now: later)
        #expect(jar.cookies.count == 50)
        #expect(!jar.cookies.contains { $0.name == "c7" })  // expired, so first to go
        #expect(jar.cookies.contains { $0.name == "c0" })
    }

    @Test("past the per-domain limit the least recently used cookie goes, not the oldest")
    func leastRecentlyUsed() throws {
        var jar = CookieJar()
        for index in 0..<50 {
            let time = now.addingTimeInterval(Double(index))
            jar.store(try cookie("c\(index)=1; Path=/p\(index)", at: time), now: time)
        }
        let later = now.addingTimeInterval(100)
        jar.recordAccess(for: CookieURL(scheme: "https", host: "www.example.com", path: "/p0"), now: later)
        jar.store(try cookie("c2=2; Path=/p2", at: later), now: later)  // replacing does not evict
        #expect(jar.cookies.count == 50)
        jar.store(try cookie("new=1; Path=/", at: later), now: later)
        #expect(jar.cookies.count == 50)
        #expect(jar.cookies.map(\.name).contains("c0"))  // used recently
        #expect(jar.cookies.map(\.name).contains("c2"))  // replaced recently
        #expect(!jar.cookies.map(\.name).contains("c1"))
        #expect(jar.cookies.map(\.name).contains("new"))
    }

    @Test("3000 in all, evicting the least recently used")
    func totalLimit() throws {
        // 60 domains of 50 cookies, the first one the least recently used.
        let full = (0..<3000).map { index in
            Cookie(
                name: "c\(index)", value: "1", domain: "h\(index / 50).example.com", hostOnly: true, path: "/",
                creationTime: now.addingTimeInterval(Double(index))
            )
        }
        var jar = CookieJar(cookies: full)
        let later = now.addingTimeInterval(5000)
        jar.store(try cookie("new=1; Path=/", from: CookieURL(scheme: "https", host: "h99.example.com", path: "/"), at: later), now: later)
        #expect(jar.cookies.count == 3000)
        #expect(!jar.cookies.contains { $0.name == "c0" })
        #expect(jar.cookies.contains { $0.name == "c1" })
        #expect(jar.cookies.contains { $0.name == "new" })
    }

    @Test("the jar round-trips through JSON")
    func codable() throws {
        var jar = CookieJar()
        jar.store(try cookie("a=1; Domain=example.com; Path=/; Secure; HttpOnly; SameSite=Strict; Max-Age=60"), now: now)
        jar.store(try cookie("b=2"), now: now)
        let data = try JSONEncoder().encode(jar)
        #expect(try JSONDecoder().decode(CookieJar.self, from: data) == jar)
    }
}
