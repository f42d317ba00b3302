import Foundation

extension CookieJar {
    /// RFC 6265 §6.1 asks for at least 50 cookies per domain and 3000 in all; Ferry keeps
    /// exactly that many so one origin cannot grow a session's stored jar without bound.
    public static let maximumCookiesPerDomain = 50
    public static let maximumCookies = 3000

    /// RFC 6265 §5.3 eviction: expired cookies first, then the least recently used. The
    /// cookie just stored is never the one evicted for it.
    mutating func enforceLimits(keeping newest: Cookie, now: Date) {
        let domainCount = cookies.count(where: { $0.domain == newest.domain })
        if domainCount > Self.maximumCookiesPerDomain {
            evict(domainCount - Self.maximumCookiesPerDomain, keeping: newest, now: now) { $0.domain == newest.domain }
        }
        if cookies.count > Self.maximumCookies {
            evict(cookies.count - Self.maximumCookies, keeping: newest, now: now) { _ in true }
        }
    }

    private mutating func evict(_ excess: Int, keeping newest: Cookie, now: Date, among isCandidate: (Cookie) -> Bool) {
        var remaining = excess
        let expired = cookies.indices.filter { isCandidate(cookies[$0]) && cookies[$0].isExpired(at: now) }
        for index in expired.prefix(remaining).reversed() {
            cookies.remove(at: index)
            remaining -= 1
        }
        guard remaining > 0 else { return }
        let leastRecentlyUsed = cookies.indices
            .filter { isCandidate(cookies[$0]) && !cookies[$0].hasSameIdentity(as: newest) }
            .sorted { (cookies[$0].lastAccessTime, $0) < (cookies[$1].lastAccessTime, $1) }
            .prefix(remaining)
        for index in leastRecentlyUsed.sorted(by: >) {
            cookies.remove(at: index)
        }
    }
}
