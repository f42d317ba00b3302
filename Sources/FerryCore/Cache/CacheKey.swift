import Foundation

/// The key a session's URL cache files a response under: method and normalised URL.
public enum CacheKey {
    /// `"GET https://example.com/a?b"`: the fragment dropped (it never reaches the server), the
    /// scheme and host lowercased, a default port removed, an empty path written "/".
    public static func make(for url: String, method: String) -> String {
        "\(method.uppercased()) \(normalisedURL(url))"
    }

    static func normalisedURL(_ url: String) -> String {
        let withoutFragment = url.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0]
        guard let schemeEnd = withoutFragment.range(of: "://") else { return String(withoutFragment) }
        let scheme = withoutFragment[..<schemeEnd.lowerBound].lowercased()
        let rest = withoutFragment[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        var authority = String(rest[..<authorityEnd])
        let afterAuthority = rest[authorityEnd...]

        // Lowercase the host and port, never the user information.
        let userInfo: String
        if let at = authority.lastIndex(of: "@") {
            userInfo = String(authority[...at])
            authority = String(authority[authority.index(after: at)...])
        } else {
            userInfo = ""
        }
        authority = authority.lowercased()
        if let port = defaultPort(for: scheme), authority.hasSuffix(":\(port)") {
            authority.removeLast(":\(port)".count)
        }
        let path = afterAuthority.first == "/" ? String(afterAuthority) : "/" + afterAuthority
        return "\(scheme)://\(userInfo)\(authority)\(path)"
    }

    static func defaultPort(for scheme: String) -> Int? {
        switch scheme {
        case "http", "ws": 80
        case "https", "wss": 443
        default: nil
        }
    }
}

extension CacheKey {
    /// `scheme://host[:port]` of an absolute URL, normalised as keys are; `nil` without one.
    static func origin(of url: String) -> String? {
        let normalised = normalisedURL(url)
        guard let schemeEnd = normalised.range(of: "://") else { return nil }
        let rest = normalised[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        return String(normalised[..<schemeEnd.upperBound]) + authority
    }
}
