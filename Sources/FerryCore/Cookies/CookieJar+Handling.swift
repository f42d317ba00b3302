import Foundation

extension CookieJar {
    /// The `Cookie` header for a request to `url` under the session's rules, or `nil` when
    /// none is to be sent (cookies off, or no cookie applies).
    public func cookieHeader(for url: CookieURL, handling: CookieHandling, now: Date) -> String? {
        guard handling.sendsCookies else { return nil }
        return cookieHeader(for: url, now: now)
    }

    /// Everything one response's `Set-Cookie` fields do to the jar under the session's rules.
    /// Returns the cookies stored (expired ones that only deleted a cookie are not counted).
    @discardableResult
    public mutating func storeCookies(
        fromSetCookieFields values: [String],
        requestURL: CookieURL,
        mainDocumentHost: String?,
        handling: CookieHandling,
        now: Date
    ) -> [Cookie] {
        guard handling.storesCookies else { return [] }
        var stored: [Cookie] = []
        for value in values {
            guard let cookie = SetCookieParser.parse(value, requestURL: requestURL, now: now),
                  CookieAcceptance.shouldAccept(cookie, policy: handling.acceptPolicy, mainDocumentHost: mainDocumentHost)
            else { continue }
            store(cookie, now: now)
            if !cookie.isExpired(at: now) { stored.append(cookie) }
        }
        return stored
    }
}
