/// The kinds of `URLSessionConfiguration` Ferry offers.
public enum SessionKind: String, Codable, Sendable, CaseIterable {
    /// `.default`: persistent cookies, cache and credentials.
    case `default`
    /// `.ephemeral`: nothing persists beyond the session.
    case ephemeral
    /// `.background(withIdentifier:)`: transfers survive restarts and retry by themselves.
    case background
}

/// `URLRequest.CachePolicy`.
public enum RequestCachePolicy: String, Codable, Sendable, CaseIterable {
    case useProtocolCachePolicy
    case reloadIgnoringLocalCacheData
    case reloadIgnoringLocalAndRemoteCacheData
    case returnCacheDataElseLoad
    case returnCacheDataDontLoad
    case reloadRevalidatingCacheData
}

/// `HTTPCookie.AcceptPolicy`.
public enum CookieAcceptPolicy: String, Codable, Sendable, CaseIterable {
    case always
    case never
    case onlyFromMainDocumentDomain
}

/// `tls_protocol_version_t`, by its Swift case names. DTLS has no meaning for HTTP over TCP.
public enum TLSProtocolVersion: String, Codable, Sendable, CaseIterable, Comparable {
    case TLSv10, TLSv11, TLSv12, TLSv13

    private var order: Int {
        switch self {
        case .TLSv10: 0
        case .TLSv11: 1
        case .TLSv12: 2
        case .TLSv13: 3
        }
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.order < rhs.order }
}

/// One proxy of `connectionProxyDictionary`.
public struct ProxyEndpoint: Codable, Sendable, Equatable {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }
}

/// `connectionProxyDictionary`, with the keys of `kCFNetworkProxies…` ("HTTPEnable", "HTTPProxy", …).
/// Proxies come only from here: never from the process environment.
public struct ProxyConfiguration: Codable, Sendable, Equatable {
    public var http: ProxyEndpoint?
    public var https: ProxyEndpoint?
    public var socks: ProxyEndpoint?

    public init(http: ProxyEndpoint? = nil, https: ProxyEndpoint? = nil, socks: ProxyEndpoint? = nil) {
        self.http = http
        self.https = https
        self.socks = socks
    }

    /// The proxy for a URL scheme: SOCKS when enabled (it carries both schemes), else the scheme's own.
    public func proxy(forScheme scheme: String) -> (endpoint: ProxyEndpoint, isSOCKS: Bool)? {
        if let socks { return (socks, true) }
        switch scheme {
        case "http": return http.map { ($0, false) }
        case "https": return https.map { ($0, false) }
        default: return nil
        }
    }
}

/// `URLSessionConfiguration`: every field with URLSession's default.
public struct SessionConfiguration: Codable, Sendable, Equatable {
    public var kind: SessionKind
    /// Required for background sessions, absent otherwise.
    public var identifier: String?
    public var timeoutIntervalForRequest: Double = 60
    public var timeoutIntervalForResource: Double = 604_800
    public var httpMaximumConnectionsPerHost: Int = 6
    public var httpAdditionalHeaders: [String: String] = [:]
    public var requestCachePolicy: RequestCachePolicy = .useProtocolCachePolicy
    public var httpShouldSetCookies: Bool = true
    public var httpCookieAcceptPolicy: CookieAcceptPolicy = .onlyFromMainDocumentDomain
    public var httpShouldUsePipelining: Bool = false
    public var tlsMinimumSupportedProtocolVersion: TLSProtocolVersion = .TLSv12
    public var tlsMaximumSupportedProtocolVersion: TLSProtocolVersion = .TLSv13
    public var connectionProxyDictionary: ProxyConfiguration?
    /// A client certificate for servers that ask for one (PEM), with its private key (PEM,
    /// optionally encrypted with the passphrase). Secrets: never shown by the API.
    public var tlsClientCertificatePEM: String?
    public var tlsClientPrivateKeyPEM: String?
    public var tlsClientPrivateKeyPassphrase: String?
    /// When set, server certificates must chain to one of these roots (PEM) instead of the
    /// system's trust store: for private PKIs.
    public var tlsTrustedRootCertificatesPEM: String?
    public var waitsForConnectivity: Bool = false
    public var isDiscretionary: Bool = false
    public var sessionSendsLaunchEvents: Bool = true
    // Accepted and shown back, with no effect on a server: there is no cellular, expensive or
    // constrained interface to avoid, no traffic class or Multipath TCP to choose, no app group
    // container and no app to keep alive. Migration 0010 gave existing sessions these defaults.
    public var allowsCellularAccess: Bool = true
    public var allowsExpensiveNetworkAccess: Bool = true
    public var allowsConstrainedNetworkAccess: Bool = true
    public var networkServiceType: NetworkServiceType = .default
    public var multipathServiceType: MultipathServiceType = .none
    public var sharedContainerIdentifier: String?
    public var shouldUseExtendedBackgroundIdleMode: Bool = false

    public init(kind: SessionKind, identifier: String? = nil) {
        self.kind = kind
        self.identifier = identifier
    }

    /// URLSession's cap on the per-host connection count is not documented; Ferry bounds it
    /// so one session cannot hold an unbounded number of sockets to a host.
    public static let maximumConnectionsPerHost = 64
    public static let maximumTimeout: Double = 604_800 * 4
}
