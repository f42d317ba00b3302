import Foundation

/// The parts of a request URL that cookies depend on (RFC 6265 §5.1.2–§5.1.4, §5.4).
public struct CookieURL: Sendable, Equatable {
    /// Lower case, e.g. `https`.
    public var scheme: String
    /// The canonicalised host (RFC 6265 §5.1.2): lower case, IPv6 without brackets.
    public var host: String
    /// The URL's path, without query or fragment; empty or not starting with "/" means "/".
    public var path: String

    public init(scheme: String, host: String, path: String) {
        self.scheme = scheme.lowercased()
        self.host = CookieDomain.canonicalHost(host)
        self.path = path
    }

    /// The parts of an absolute URL string; `nil` when it has no scheme or host.
    public init?(string: String) {
        guard let components = URLComponents(string: string),
              let scheme = components.scheme, let host = components.host, !host.isEmpty
        else { return nil }
        self.init(scheme: scheme, host: host, path: components.percentEncodedPath)
    }

    /// Whether `Secure` cookies may travel on this URL. Only a secure scheme counts: loopback
    /// over plain http (`http://localhost`, `http://127.0.0.1`) is not secure here, because for
    /// a service the "local" machine is Ferry's, not the client's.
    public var isSecure: Bool {
        scheme == "https" || scheme == "wss"
    }
}
