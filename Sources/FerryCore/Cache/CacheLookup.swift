import Foundation

/// Chooses between the cache and the network for one request, as `URLRequest.CachePolicy`
/// and RFC 9111 §4 say.
public enum CacheLookup {
    /// URLSession's error for `returnCacheDataDontLoad` without a cached response.
    public static let notCachedError = URLErrorCode.notConnectedToInternet

    /// Request fields that make a request the client's own conditional or partial one: such
    /// a request goes to the origin as it is, and its answer is the client's to judge.
    static let bypassingRequestFields = ["range", "if-range", "if-none-match", "if-modified-since", "if-match", "if-unmodified-since"]

    /// - Parameters:
    ///   - policy: the request's `cachePolicy`, else the session's `requestCachePolicy`.
    ///   - request: the request as it will be sent (session headers merged, `Cookie` added).
    ///   - entry: what the cache holds under `CacheKey.make(for: request.url, method: "GET")`.
    public static func decide(policy: RequestCachePolicy, request: TransferRequest, entry: CachedResponse?, now: Date) -> CacheDecision {
        let cannotLoad: CacheDecision = policy == .returnCacheDataDontLoad ? .failNotCached : .fetch
        guard isEligible(request) else { return cannotLoad }
        let usable = entry.flatMap { selects($0, request: request) ? $0 : nil }

        switch policy {
        case .reloadIgnoringLocalCacheData, .reloadIgnoringLocalAndRemoteCacheData:
            return .fetch
        case .returnCacheDataElseLoad, .returnCacheDataDontLoad:
            // URLSession uses any stored response here, however stale.
            return usable == nil ? cannotLoad : .useCached
        case .reloadRevalidatingCacheData:
            guard let usable else { return .fetch }
            // RFC 8246: an immutable response is not revalidated while fresh, even on reload.
            if usable.cacheControl.immutable, CacheFreshness.isFresh(usable, now: now) { return .useCached }
            return revalidateOrFetch(usable)
        case .useProtocolCachePolicy:
            return protocolDecision(request: request, entry: usable, now: now)
        }
    }

    /// RFC 9111 §4: reuse when fresh and nothing demands validation, validate when possible,
    /// otherwise fetch; `only-if-cached` turns every network need into `failNotCached`.
    private static func protocolDecision(request: TransferRequest, entry: CachedResponse?, now: Date) -> CacheDecision {
        let requestControl = CacheControl(request: request)
        let needsNetwork: CacheDecision
        if let entry {
            let responseControl = entry.cacheControl
            let mustValidate = requestControl.noCache != nil || responseControl.noCache == .all
            if !mustValidate, isAcceptable(entry, requestControl: requestControl, responseControl: responseControl, now: now) {
                return .useCached
            }
            needsNetwork = revalidateOrFetch(entry)
        } else {
            needsNetwork = .fetch
        }
        return requestControl.onlyIfCached ? .failNotCached : needsNetwork
    }

    /// Fresh enough for the request's `max-age` and `min-fresh`, or stale within its
    /// `max-stale` when the response allows serving it stale (no `must-revalidate`).
    private static func isAcceptable(_ entry: CachedResponse, requestControl: CacheControl, responseControl: CacheControl, now: Date) -> Bool {
        let age = CacheFreshness.age(of: entry, now: now)
        let lifetime = CacheFreshness.freshnessLifetime(of: entry)
        if let maxAge = requestControl.maxAge, age > TimeInterval(maxAge) { return false }
        let remaining = lifetime - age
        if remaining > 0, remaining >= TimeInterval(requestControl.minFresh ?? 0) { return true }
        guard let maxStale = requestControl.maxStale, !responseControl.mustRevalidate else { return false }
        return maxStale == Int.max || -remaining <= TimeInterval(maxStale)
    }

    /// RFC 9111 §4.3.1: `If-None-Match` with the entity tag, `If-Modified-Since` with
    /// `Last-Modified`; without either validator the entry cannot be revalidated.
    static func revalidateOrFetch(_ entry: CachedResponse) -> CacheDecision {
        var conditions: [CachedHeaderField] = []
        if let etag = entry.value(of: "ETag") {
            conditions.append(CachedHeaderField(name: "If-None-Match", value: etag))
        }
        if let lastModified = entry.value(of: "Last-Modified") {
            conditions.append(CachedHeaderField(name: "If-Modified-Since", value: lastModified))
        }
        return conditions.isEmpty ? .fetch : .revalidate(conditionalHeaders: conditions)
    }

    /// Only plain GETs use the cache; a client's own ranges and conditions go to the origin.
    private static func isEligible(_ request: TransferRequest) -> Bool {
        guard request.httpMethod.uppercased() == "GET" else { return false }
        return !request.allHTTPHeaderFields.keys.contains { bypassingRequestFields.contains($0.lowercased()) }
    }

    /// The entry answers this request: same key, and `Vary` is satisfied.
    private static func selects(_ entry: CachedResponse, request: TransferRequest) -> Bool {
        CacheKey.make(for: entry.url, method: entry.method) == CacheKey.make(for: request.url, method: request.httpMethod)
            && CacheVary.matches(entry, request: request)
    }
}
