extension CurlURL {
    /// The port a connection to this URL uses: the explicit one, else the scheme's default.
    public var effectivePort: Int? {
        port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : nil)
    }

    /// Whether two URLs share an origin (RFC 6454: scheme, host, port). Unparsable URLs share
    /// none: credentials are kept only where sameness is certain.
    public static func isSameOrigin(_ first: String, _ second: String) -> Bool {
        guard let a = try? CurlURL(parsing: first), let b = try? CurlURL(parsing: second) else { return false }
        return a.scheme == b.scheme && a.host.lowercased() == b.host.lowercased() && a.effectivePort == b.effectivePort
    }
}
