import FerryCore
import Foundation
import Testing

@Suite("Cookie accept policy and httpShouldSetCookies")
struct CookieAcceptanceTests {
    let now = Date(timeIntervalSince1970: 1_700_000_000)

    private func cookie(domain: String, hostOnly: Bool) -> Cookie {
        Cookie(name: "a", value: "1", domain: domain, hostOnly: hostOnly, path: "/", creationTime: now)
    }

    @Test("onlyFromMainDocumentDomain", arguments: [
        // (cookie domain, host-only, main document host, accepted)
        ("example.com", false, "www.example.com", true),  // the cookie covers the document
        ("www.example.com", true, "www.example.com", true),
        ("api.example.com", true, "example.com", true),  // the document covers the cookie
        ("api.example.com", true, "www.example.com", false),  // siblings
        ("tracker.net", true, "www.example.com", false),
        ("example.com", false, "WWW.EXAMPLE.COM", true),
        ("127.0.0.1", true, "127.0.0.1", true),
        ("127.0.0.1", true, "127.0.0.2", false),
    ])
    func mainDocument(domain: String, hostOnly: Bool, mainDocumentHost: String, accepted: Bool) {
        let result = CookieAcceptance.shouldAccept(
            cookie(domain: domain, hostOnly: hostOnly), policy: .onlyFromMainDocumentDomain, mainDocumentHost: mainDocumentHost
        )
        #expect(result == accepted)
    }

    @Test("always and never ignore the document")
    func alwaysNever() {
        let thirdParty = cookie(domain: "tracker.net", hostOnly: true)
        #expect(CookieAcceptance.shouldAccept(thirdParty, policy: .always, mainDocumentHost: "example.com"))
        #expect(!CookieAcceptance.shouldAccept(thirdParty, policy: .never, mainDocumentHost: "tracker.net"))
        #expect(CookieAcceptance.shouldAccept(thirdParty, policy: .onlyFromMainDocumentDomain, mainDocumentHost: nil))
    }

    @Test("what each configuration sends and stores", arguments: [
        (true, CookieAcceptPolicy.always, true, true),
        (true, .onlyFromMainDocumentDomain, true, true),
        (true, .never, true, false),  // never stores, but cookies already held are still sent
        (false, .always, false, false),
        (false, .never, false, false),
    ])
    func handling(setCookies: Bool, policy: CookieAcceptPolicy, sends: Bool, stores: Bool) {
        let handling = CookieHandling(httpShouldSetCookies: setCookies, acceptPolicy: policy)
        #expect(handling.sendsCookies == sends)
        #expect(handling.storesCookies == stores)
    }

    @Test("a task's Set-Cookie fields under the session's rules")
    func storeFromResponse() throws {
        let handling = CookieHandling(configuration: SessionConfiguration(kind: .default))
        #expect(handling == CookieHandling(httpShouldSetCookies: true, acceptPolicy: .onlyFromMainDocumentDomain))

        var jar = CookieJar()
        let hop = CookieURL(scheme: "https", host: "cdn.other.net", path: "/img")
        let fromRedirect = jar.storeCookies(
            fromSetCookieFields: ["third=1"], requestURL: hop, mainDocumentHost: "www.example.com", handling: handling, now: now
        )
        #expect(fromRedirect.isEmpty)

        let page = CookieURL(scheme: "https", host: "www.example.com", path: "/")
        let stored = jar.storeCookies(
            fromSetCookieFields: ["a=1", "b=2; Domain=example.com", "bad", "c=3; Domain=other.net"],
            requestURL: page, mainDocumentHost: "www.example.com", handling: handling, now: now
        )
        #expect(stored.map(\.name) == ["a", "b"])
        #expect(jar.cookieHeader(for: page, handling: handling, now: now) == "a=1; b=2")

        let off = CookieHandling(httpShouldSetCookies: false, acceptPolicy: .always)
        #expect(jar.cookieHeader(for: page, handling: off, now: now) == nil)
        let ignored = jar.storeCookies(fromSetCookieFields: ["d=4"], requestURL: page, mainDocumentHost: nil, handling: off, now: now)
        #expect(ignored.isEmpty)
        #expect(jar.cookies.count == 2)
    }
}
