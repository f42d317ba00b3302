/// Whether a response may enter a session's URL cache: RFC 9111 §3 for a private cache.
public enum CachePolicy {
    /// RFC 9110 §15.1: statuses cacheable by default, i.e. heuristically. 206 is among them,
    /// but Ferry does not store partial content, so it is left out here.
    public static let heuristicallyCacheableStatuses: Set<Int> = [200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501]

    /// Statuses whose caching rules Ferry implements, for `must-understand` (§5.2.2.3).
    static let understoodStatuses: Set<Int> = heuristicallyCacheableStatuses.union([302, 303, 307])

    /// RFC 9111 §3. Only GET responses are stored (a HEAD response carries no body to reuse);
    /// final statuses only, never 206 or 304; no `no-store` on either side (unless the
    /// response's `must-understand` names a status Ferry understands); `Vary: *` is never
    /// stored since it could never be reused; and the response must say it may be cached
    /// (explicit freshness, `public`, `private`) or have a status cacheable by default.
    ///
    /// A request with `Authorization` is stored only when the response says `public`,
    /// `must-revalidate` or `s-maxage` (§3.5). That rule binds shared caches; Ferry applies
    /// it to its private per-session caches too, so a credential-bearing answer is never
    /// reused unless the origin said it may be.
    public static func isStorable(request: TransferRequest, response: ResponseHead) -> Bool {
        guard request.httpMethod.uppercased() == "GET" else { return false }
        let status = response.statusCode
        guard status >= 200, status != 206, status != 304 else { return false }

        let responseControl = CacheControl(head: response)
        let requestControl = CacheControl(request: request)
        if requestControl.noStore { return false }
        if responseControl.mustUnderstand {
            guard understoodStatuses.contains(status) else { return false }
        } else if responseControl.noStore {
            return false
        }
        if CacheVary.isWildcard(response) { return false }

        if request.value(forHTTPHeaderField: "Authorization") != nil,
           !(responseControl.isPublic || responseControl.mustRevalidate || responseControl.sharedMaxAge != nil) {
            return false
        }

        let hasExplicitPermission = responseControl.isPublic || responseControl.isPrivate
            || responseControl.maxAge != nil || response.value(of: "Expires") != nil
        return hasExplicitPermission || heuristicallyCacheableStatuses.contains(status)
    }
}
