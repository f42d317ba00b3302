import CCurl

// Typed names for the curl options Swift code above this module may set, so that no caller
// imports CCurl and a value of the wrong type cannot reach curl's variadic setter.

/// An option that takes a C string (curl copies it).
public struct CurlStringOption: Sendable {
    let raw: CURLoption

    public static let url = Self(raw: CURLOPT_URL)
    public static let customRequest = Self(raw: CURLOPT_CUSTOMREQUEST)
    public static let range = Self(raw: CURLOPT_RANGE)
    public static let userAgent = Self(raw: CURLOPT_USERAGENT)
    /// The proxy URL; "" disables proxies, including those named by the environment.
    public static let proxy = Self(raw: CURLOPT_PROXY)
    public static let noProxy = Self(raw: CURLOPT_NOPROXY)
    public static let proxyUsername = Self(raw: CURLOPT_PROXYUSERNAME)
    public static let proxyPassword = Self(raw: CURLOPT_PROXYPASSWORD)
    public static let protocols = Self(raw: CURLOPT_PROTOCOLS_STR)
    public static let redirectProtocols = Self(raw: CURLOPT_REDIR_PROTOCOLS_STR)
    public static let username = Self(raw: CURLOPT_USERNAME)
    public static let password = Self(raw: CURLOPT_PASSWORD)
    /// "" asks curl to offer every encoding it can decode and to decode the response.
    public static let acceptEncoding = Self(raw: CURLOPT_ACCEPT_ENCODING)
    public static let caInfo = Self(raw: CURLOPT_CAINFO)
    public static let sslCertType = Self(raw: CURLOPT_SSLCERTTYPE)
    public static let sslKeyType = Self(raw: CURLOPT_SSLKEYTYPE)
    public static let keyPassword = Self(raw: CURLOPT_KEYPASSWD)
}

/// An option that takes a `long`.
public struct CurlLongOption: Sendable {
    let raw: CURLoption

    public static let noSignal = Self(raw: CURLOPT_NOSIGNAL)
    public static let noProgress = Self(raw: CURLOPT_NOPROGRESS)
    public static let verbose = Self(raw: CURLOPT_VERBOSE)
    public static let followLocation = Self(raw: CURLOPT_FOLLOWLOCATION)
    public static let maxRedirects = Self(raw: CURLOPT_MAXREDIRS)
    public static let noBody = Self(raw: CURLOPT_NOBODY)
    public static let httpGet = Self(raw: CURLOPT_HTTPGET)
    public static let post = Self(raw: CURLOPT_POST)
    public static let upload = Self(raw: CURLOPT_UPLOAD)
    public static let connectTimeoutMilliseconds = Self(raw: CURLOPT_CONNECTTIMEOUT_MS)
    public static let timeoutMilliseconds = Self(raw: CURLOPT_TIMEOUT_MS)
    public static let lowSpeedLimit = Self(raw: CURLOPT_LOW_SPEED_LIMIT)
    public static let lowSpeedTime = Self(raw: CURLOPT_LOW_SPEED_TIME)
    public static let bufferSize = Self(raw: CURLOPT_BUFFERSIZE)
    public static let uploadBufferSize = Self(raw: CURLOPT_UPLOAD_BUFFERSIZE)
    public static let httpVersion = Self(raw: CURLOPT_HTTP_VERSION)
    public static let sslVersion = Self(raw: CURLOPT_SSLVERSION)
    public static let sslVerifyPeer = Self(raw: CURLOPT_SSL_VERIFYPEER)
    public static let sslVerifyHost = Self(raw: CURLOPT_SSL_VERIFYHOST)
    public static let httpAuth = Self(raw: CURLOPT_HTTPAUTH)
    public static let proxyAuth = Self(raw: CURLOPT_PROXYAUTH)
    public static let proxyType = Self(raw: CURLOPT_PROXYTYPE)
    public static let tcpKeepAlive = Self(raw: CURLOPT_TCP_KEEPALIVE)
    public static let tcpNoDelay = Self(raw: CURLOPT_TCP_NODELAY)
    public static let certInfo = Self(raw: CURLOPT_CERTINFO)
    public static let pipeWait = Self(raw: CURLOPT_PIPEWAIT)
    public static let maxAgeConnection = Self(raw: CURLOPT_MAXAGE_CONN)
    public static let forbidReuse = Self(raw: CURLOPT_FORBID_REUSE)
    public static let freshConnect = Self(raw: CURLOPT_FRESH_CONNECT)
    /// Seconds since its creation after which a connection is not reused (and is closed).
    public static let maxLifetimeConnection = Self(raw: CURLOPT_MAXLIFETIME_CONN)
    public static let unrestrictedAuth = Self(raw: CURLOPT_UNRESTRICTED_AUTH)
    public static let httpContentDecoding = Self(raw: CURLOPT_HTTP_CONTENT_DECODING)
    public static let expect100TimeoutMilliseconds = Self(raw: CURLOPT_EXPECT_100_TIMEOUT_MS)
    public static let ipResolve = Self(raw: CURLOPT_IPRESOLVE)
    public static let suppressConnectHeaders = Self(raw: CURLOPT_SUPPRESS_CONNECT_HEADERS)
}

/// An option that takes a `curl_off_t` (64-bit sizes and offsets).
public struct CurlOffsetOption: Sendable {
    let raw: CURLoption

    public static let postFieldSize = Self(raw: CURLOPT_POSTFIELDSIZE_LARGE)
    public static let inFileSize = Self(raw: CURLOPT_INFILESIZE_LARGE)
    public static let maxFileSize = Self(raw: CURLOPT_MAXFILESIZE_LARGE)
    public static let maxReceiveSpeed = Self(raw: CURLOPT_MAX_RECV_SPEED_LARGE)
}

/// An option that takes a `curl_slist` of lines.
public struct CurlListOption: Sendable {
    let raw: CURLoption

    public static let httpHeader = Self(raw: CURLOPT_HTTPHEADER)
    public static let proxyHeader = Self(raw: CURLOPT_PROXYHEADER)
    public static let resolve = Self(raw: CURLOPT_RESOLVE)
    public static let http200Aliases = Self(raw: CURLOPT_HTTP200ALIASES)
}

/// An option that takes in-memory bytes (curl copies them), such as PEM certificates.
public struct CurlBlobOption: Sendable {
    let raw: CURLoption

    public static let caInfo = Self(raw: CURLOPT_CAINFO_BLOB)
    public static let sslCertificate = Self(raw: CURLOPT_SSLCERT_BLOB)
    public static let sslKey = Self(raw: CURLOPT_SSLKEY_BLOB)
}

/// Values for `.httpAuth` (a bit mask).
public struct CurlAuthMethods: OptionSet, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    public static let basic = Self(rawValue: Int(bitPattern: ferry_curlauth_basic))
    public static let digest = Self(rawValue: Int(bitPattern: ferry_curlauth_digest))
    public static let ntlm = Self(rawValue: Int(bitPattern: ferry_curlauth_ntlm))
    public static let negotiate = Self(rawValue: Int(bitPattern: ferry_curlauth_negotiate))
    public static let any: Self = [.basic, .digest, .ntlm, .negotiate]
}

/// Values for `.sslVersion`: a minimum, optionally combined with a maximum.
public enum CurlTLSVersion: Sendable {
    case tls1_0, tls1_1, tls1_2, tls1_3

    var minimumValue: Int {
        switch self {
        case .tls1_0: CURL_SSLVERSION_TLSv1_0
        case .tls1_1: CURL_SSLVERSION_TLSv1_1
        case .tls1_2: CURL_SSLVERSION_TLSv1_2
        case .tls1_3: CURL_SSLVERSION_TLSv1_3
        }
    }

    var maximumValue: Int {
        switch self {
        case .tls1_0: CURL_SSLVERSION_MAX_TLSv1_0
        case .tls1_1: CURL_SSLVERSION_MAX_TLSv1_1
        case .tls1_2: CURL_SSLVERSION_MAX_TLSv1_2
        case .tls1_3: CURL_SSLVERSION_MAX_TLSv1_3
        }
    }

    /// The `.sslVersion` value for a range of versions.
    public static func optionValue(minimum: CurlTLSVersion?, maximum: CurlTLSVersion?) -> Int {
        (minimum?.minimumValue ?? CURL_SSLVERSION_DEFAULT) | (maximum?.maximumValue ?? CURL_SSLVERSION_MAX_DEFAULT)
    }
}

/// Values for `.proxyType`.
public enum CurlProxyKind: Sendable {
    case http, https, socks4, socks4a, socks5, socks5Hostname

    public var optionValue: Int {
        switch self {
        case .http: Int(CURLPROXY_HTTP.rawValue)
        case .https: Int(CURLPROXY_HTTPS.rawValue)
        case .socks4: Int(CURLPROXY_SOCKS4.rawValue)
        case .socks4a: Int(CURLPROXY_SOCKS4A.rawValue)
        case .socks5: Int(CURLPROXY_SOCKS5.rawValue)
        case .socks5Hostname: Int(CURLPROXY_SOCKS5_HOSTNAME.rawValue)
        }
    }
}

/// Values for `.httpVersion`.
public enum CurlHTTPVersion: Sendable {
    case http1_1, http2OverTLS

    public var optionValue: Int {
        switch self {
        case .http1_1: CURL_HTTP_VERSION_1_1
        case .http2OverTLS: CURL_HTTP_VERSION_2TLS
        }
    }
}
