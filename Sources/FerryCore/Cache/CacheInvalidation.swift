import Foundation

/// RFC 9111 §4.4: a successful unsafe request makes what the cache holds for its target stale.
public enum CacheInvalidation {
    /// RFC 9110 §9.2.1: every other method (POST, PUT, DELETE, PATCH, unknown ones) is unsafe.
    static let safeMethods: Set<String> = ["GET", "HEAD", "OPTIONS", "TRACE"]

    /// The cache keys to remove after `method` on `requestURL` got `response`: none for a safe
    /// method or an error status; else the request URL's key and those of `Location` and
    /// `Content-Location` when they name the same origin (another origin's entries are not
    /// this response's to invalidate).
    public static func invalidatedKeys(method: String, requestURL: String, response: ResponseHead) -> [String] {
        guard !safeMethods.contains(method.uppercased()), (200...399).contains(response.statusCode) else { return [] }
        var keys = [CacheKey.make(for: requestURL, method: "GET")]
        let origin = CacheKey.origin(of: requestURL)
        for name in ["Location", "Content-Location"] {
            guard let reference = response.value(of: name),
                  let resolved = URL(string: reference.trimmingSpaces, relativeTo: URL(string: requestURL))?.absoluteString,
                  origin != nil, CacheKey.origin(of: resolved) == origin
            else { continue }
            let key = CacheKey.make(for: resolved, method: "GET")
            if !keys.contains(key) { keys.append(key) }
        }
        return keys
    }
}
