import Foundation

/// One session's cookie storage (`HTTPCookieStorage`): RFC 6265 §5.3 storage and §5.4
/// retrieval, as a value the store persists as JSON.
public struct CookieJar: Codable, Sendable, Equatable {
    /// In insertion order; identity is (name, domain, path).
    public internal(set) var cookies: [Cookie]

    public init(cookies: [Cookie] = []) {
        self.cookies = cookies
    }

    /// RFC 6265 §5.3 steps 11–12: a cookie with the same name, domain and path replaces the
    /// old one but keeps its creation time (so its place in the `Cookie` header is stable);
    /// an already expired cookie only removes the old one. Limits are applied afterwards.
    public mutating func store(_ cookie: Cookie, now: Date) {
        var cookie = cookie
        if let index = cookies.firstIndex(where: { $0.hasSameIdentity(as: cookie) }) {
            cookie.creationTime = cookies[index].creationTime
            cookies.remove(at: index)
        }
        guard !cookie.isExpired(at: now) else { return }
        cookies.append(cookie)
        enforceLimits(keeping: cookie, now: now)
    }

    /// RFC 6265 §5.4 steps 1–2: the cookies to send to `url`, longest path first, then the
    /// earliest created. Expired cookies are never returned even before they are removed.
    public func cookies(for url: CookieURL, now: Date) -> [Cookie] {
        cookies.enumerated()
            .filter { _, cookie in
                let domainMatches = cookie.hostOnly
                    ? url.host == cookie.domain
                    : CookieDomain.matches(host: url.host, domain: cookie.domain)
                return domainMatches
                    && CookiePath.matches(requestPath: url.path, cookiePath: cookie.path)
                    && (!cookie.secure || url.isSecure)
                    && !cookie.isExpired(at: now)
            }
            .sorted { lhs, rhs in
                let lhsLength = lhs.element.path.utf8.count
                let rhsLength = rhs.element.path.utf8.count
                if lhsLength != rhsLength { return lhsLength > rhsLength }
                return (lhs.element.creationTime, lhs.offset) < (rhs.element.creationTime, rhs.offset)
            }
            .map(\.element)
    }

    /// RFC 6265 §5.4 step 4: the `Cookie` header value for `url`, or `nil` when no cookie applies.
    public func cookieHeader(for url: CookieURL, now: Date) -> String? {
        let matching = cookies(for: url, now: now)
        guard !matching.isEmpty else { return nil }
        return matching.map { "\($0.name)=\($0.value)" }.joined(separator: "; ")
    }

    /// RFC 6265 §5.4 step 3: the cookies sent to `url` were used now, which keeps them from
    /// being evicted first when a limit is reached.
    public mutating func recordAccess(for url: CookieURL, now: Date) {
        let used = cookies(for: url, now: now)
        for index in cookies.indices where used.contains(where: { $0.hasSameIdentity(as: cookies[index]) }) {
            cookies[index].lastAccessTime = now
        }
    }

    public mutating func removeExpired(now: Date) {
        cookies.removeAll { $0.isExpired(at: now) }
    }

    /// `URLSession.reset`: every cookie goes.
    public mutating func removeAll() {
        cookies.removeAll()
    }
}
