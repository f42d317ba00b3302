/// Path rules of RFC 6265 §5.1.4.
public enum CookiePath {
    /// The default-path of a cookie set by a request for `uriPath` (RFC 6265 §5.1.4): the
    /// directory of the path, "/" when there is none.
    public static func defaultPath(for uriPath: String) -> String {
        guard uriPath.first == "/" else { return "/" }
        guard let lastSlash = uriPath.lastIndex(of: "/"), lastSlash != uriPath.startIndex else { return "/" }
        return String(uriPath[..<lastSlash])
    }

    /// RFC 6265 §5.1.4 path-match: identical; or `cookiePath` is a prefix of `requestPath` and
    /// either ends in "/" or is followed by "/" in `requestPath`. So "/docs" matches "/docs/x"
    /// but not "/docsets".
    public static func matches(requestPath: String, cookiePath: String) -> Bool {
        // Byte-wise, as the RFC compares octets (String's == would apply Unicode equivalence).
        let request = Array((requestPath.first == "/" ? requestPath : "/").utf8)
        let cookie = Array(cookiePath.utf8)
        if request == cookie { return true }
        guard request.starts(with: cookie) else { return false }
        if cookie.last == UInt8(ascii: "/") { return true }
        return request[cookie.count] == UInt8(ascii: "/")
    }
}
