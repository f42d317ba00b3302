extension SessionConfiguration {
    /// Reads `configuration` of a session-creation body, applying URLSession's defaults to what is absent.
    public init(validating reader: FieldReader) throws {
        guard let kind = try reader.choice("kind", as: SessionKind.self) else {
            throw reader.error("kind", "is required: \"default\", \"ephemeral\" or \"background\".")
        }
        self.init(kind: kind)

        let identifier = try reader.string("identifier", maxLength: 256, allowEmpty: false)
        switch (kind, identifier) {
        case (.background, nil):
            throw reader.error("identifier", "is required for a background session.")
        case (.background, let identifier?):
            self.identifier = identifier
        case (_, .some):
            throw reader.error("identifier", "is only for background sessions.")
        case (_, nil):
            break
        }

        let timeouts = 0.001...Self.maximumTimeout
        if let value = try reader.number("timeoutIntervalForRequest", in: timeouts) { timeoutIntervalForRequest = value }
        if let value = try reader.number("timeoutIntervalForResource", in: timeouts) { timeoutIntervalForResource = value }
        if let value = try reader.integer("httpMaximumConnectionsPerHost", in: 1...Self.maximumConnectionsPerHost) {
            httpMaximumConnectionsPerHost = value
        }
        if let headers = try reader.stringMap("httpAdditionalHeaders", maxCount: HTTPHeaderRules.maximumCount) {
            try HTTPHeaderRules.validate(headers, field: reader.fieldPath("httpAdditionalHeaders"))
            httpAdditionalHeaders = headers
        }
        if let value = try reader.choice("requestCachePolicy", as: RequestCachePolicy.self) { requestCachePolicy = value }
        if let value = try reader.bool("httpShouldSetCookies") { httpShouldSetCookies = value }
        if let value = try reader.choice("httpCookieAcceptPolicy", as: CookieAcceptPolicy.self) { httpCookieAcceptPolicy = value }
        if let value = try reader.bool("httpShouldUsePipelining") { httpShouldUsePipelining = value }
        if let value = try reader.choice("tlsMinimumSupportedProtocolVersion", as: TLSProtocolVersion.self) {
            tlsMinimumSupportedProtocolVersion = value
        }
        if let value = try reader.choice("tlsMaximumSupportedProtocolVersion", as: TLSProtocolVersion.self) {
            tlsMaximumSupportedProtocolVersion = value
        }
        guard tlsMinimumSupportedProtocolVersion <= tlsMaximumSupportedProtocolVersion else {
            throw reader.error("tlsMaximumSupportedProtocolVersion", "must not be lower than tlsMinimumSupportedProtocolVersion.")
        }
        if let proxies = try reader.object("connectionProxyDictionary") {
            connectionProxyDictionary = try ProxyConfiguration(validating: proxies)
        }
        tlsClientCertificatePEM = try Self.pem(reader, "tlsClientCertificatePEM", expecting: "CERTIFICATE")
        tlsClientPrivateKeyPEM = try Self.pem(reader, "tlsClientPrivateKeyPEM", expecting: "PRIVATE KEY")
        tlsClientPrivateKeyPassphrase = try reader.string("tlsClientPrivateKeyPassphrase", maxLength: 1024)
        guard (tlsClientCertificatePEM == nil) == (tlsClientPrivateKeyPEM == nil) else {
            let missing = tlsClientCertificatePEM == nil ? "tlsClientCertificatePEM" : "tlsClientPrivateKeyPEM"
            throw reader.error(missing, "is required with the other half of the client certificate.")
        }
        if let (field, message) = clientKeyProblem { throw reader.error(field, message) }
        tlsTrustedRootCertificatesPEM = try Self.pem(reader, "tlsTrustedRootCertificatesPEM", expecting: "CERTIFICATE")
        if let value = try reader.bool("waitsForConnectivity") { waitsForConnectivity = value }
        if let value = try reader.bool("isDiscretionary") { isDiscretionary = value }
        if let value = try reader.bool("sessionSendsLaunchEvents") { sessionSendsLaunchEvents = value }
        if let value = try reader.bool("allowsCellularAccess") { allowsCellularAccess = value }
        if let value = try reader.bool("allowsExpensiveNetworkAccess") { allowsExpensiveNetworkAccess = value }
        if let value = try reader.bool("allowsConstrainedNetworkAccess") { allowsConstrainedNetworkAccess = value }
        if let value = try reader.choice("networkServiceType", as: NetworkServiceType.self) { networkServiceType = value }
        if let value = try reader.choice("multipathServiceType", as: MultipathServiceType.self) { multipathServiceType = value }
        sharedContainerIdentifier = try reader.string("sharedContainerIdentifier", maxLength: 256, allowEmpty: false)
        if let value = try reader.bool("shouldUseExtendedBackgroundIdleMode") { shouldUseExtendedBackgroundIdleMode = value }
        try reader.finish()
    }
}

extension SessionConfiguration {
    /// A PEM document whose blocks include `-----BEGIN …<kind>-----` (e.g. "PRIVATE KEY" matches
    /// "RSA PRIVATE KEY", "EC PRIVATE KEY" and "ENCRYPTED PRIVATE KEY").
    static func pem(_ reader: FieldReader, _ key: String, expecting kind: String) throws -> String? {
        guard let text = try reader.string(key, maxLength: 256 * 1024, allowEmpty: false) else { return nil }
        guard text.contains("-----BEGIN "), text.contains("\(kind)-----") else {
            throw reader.error(key, "must be PEM text with a -----BEGIN …\(kind)----- block.")
        }
        return text
    }

    /// The configuration as the API shows it: secrets replaced by a marker.
    public var redactingSecrets: SessionConfiguration {
        var shown = self
        if shown.tlsClientPrivateKeyPEM != nil { shown.tlsClientPrivateKeyPEM = Self.redacted }
        if shown.tlsClientPrivateKeyPassphrase != nil { shown.tlsClientPrivateKeyPassphrase = Self.redacted }
        return shown
    }

    public static let redacted = "[redacted]"
}

extension ProxyConfiguration {
    init(validating reader: FieldReader) throws {
        self.init(
            http: try Self.endpoint(reader, prefix: "HTTP"),
            https: try Self.endpoint(reader, prefix: "HTTPS"),
            socks: try Self.endpoint(reader, prefix: "SOCKS")
        )
        try reader.finish()
    }

    /// `<prefix>Enable`, `<prefix>Proxy`, `<prefix>Port`, as in `kCFNetworkProxiesHTTPEnable` & co.
    private static func endpoint(_ reader: FieldReader, prefix: String) throws -> ProxyEndpoint? {
        let enabled = try reader.bool("\(prefix)Enable") ?? false
        let host = try reader.string("\(prefix)Proxy", maxLength: 253, allowEmpty: false)
        let port = try reader.integer("\(prefix)Port", in: 1...65535)
        guard enabled else { return nil }
        guard let host else { throw reader.error("\(prefix)Proxy", "is required when \(prefix)Enable is true.") }
        guard host.utf8.allSatisfy({ HTTPHeaderRules.isTokenByte($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: "[") || $0 == UInt8(ascii: "]") }) else {
            throw reader.error("\(prefix)Proxy", "must be a host name or address.")
        }
        guard let port else { throw reader.error("\(prefix)Port", "is required when \(prefix)Enable is true.") }
        return ProxyEndpoint(host: host, port: port)
    }
}
