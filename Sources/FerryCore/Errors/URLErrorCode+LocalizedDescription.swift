/// Apple's English `localizedDescription` for each code, so that a tenant's logs read the same
/// as on Apple platforms.
extension URLErrorCode {
    /// The description without a host name. For the certificate errors, whose Apple text names
    /// the host, this is the text's first sentence.
    public var localizedDescription: String {
        localizedDescription(host: nil)
    }

    /// The description; for the TLS certificate errors (-1201…-1206), Apple's full text naming
    /// `host` when one is given.
    public func localizedDescription(host: String?) -> String {
        if let host, !host.isEmpty, let text = Self.hostDescriptions[self] {
            return text(host)
        }
        return Self.descriptions[self]
            ?? "The operation couldn’t be completed. (NSURLErrorDomain error \(rawValue).)"
    }

    private static let descriptions: [URLErrorCode: String] = [
        .unknown: "unknown error",
        .backgroundSessionWasDisconnected: "Lost connection to background transfer service",
        .cancelled: "cancelled",
        .badURL: "bad URL",
        .timedOut: "The request timed out.",
        .unsupportedURL: "unsupported URL",
        .cannotFindHost: "A server with the specified hostname could not be found.",
        .cannotConnectToHost: "Could not connect to the server.",
        .networkConnectionLost: "The network connection was lost.",
        .dnsLookupFailed: "DNS lookup error",
        .httpTooManyRedirects: "too many HTTP redirects",
        .resourceUnavailable: "resource unavailable",
        .notConnectedToInternet: "The Internet connection appears to be offline.",
        .redirectToNonExistentLocation: "redirected to nowhere",
        .badServerResponse: "There was a bad response from the server.",
        .zeroByteResource: "zero byte resource",
        .cannotDecodeRawData: "cannot decode raw data",
        .cannotDecodeContentData: "cannot decode content data",
        .cannotParseResponse: "cannot parse response",
        .requestBodyStreamExhausted: "request body stream exhausted",
        .dataLengthExceedsMaximum: "resource exceeds maximum size",
        .secureConnectionFailed: "An SSL error has occurred and a secure connection to the server cannot be made.",
        .serverCertificateHasBadDate: "The certificate for this server has expired.",
        .serverCertificateUntrusted: "The certificate for this server is invalid.",
        .serverCertificateHasUnknownRoot: "The certificate for this server was signed by an unknown certifying authority.",
        .serverCertificateNotYetValid: "The certificate for this server is not yet valid.",
        .clientCertificateRejected: "The server did not accept the certificate.",
        .clientCertificateRequired: "The server requires a client certificate.",
        .cannotCreateFile: "cannot create file",
        .cannotOpenFile: "cannot open file",
        .cannotCloseFile: "failure closing file",
        .cannotWriteToFile: "cannot write to file",
        .cannotRemoveFile: "cannot remove file",
        .cannotMoveFile: "cannot move file",
    ]

    private static let hostDescriptions: [URLErrorCode: @Sendable (String) -> String] = [
        .serverCertificateHasBadDate: { "The certificate for this server has expired. " + warning(naming: $0) },
        .serverCertificateUntrusted: { "The certificate for this server is invalid. " + warning(naming: $0) },
        .serverCertificateHasUnknownRoot: {
            "The certificate for this server was signed by an unknown certifying authority. " + warning(naming: $0)
        },
        .serverCertificateNotYetValid: { "The certificate for this server is not yet valid. " + warning(naming: $0) },
        .clientCertificateRejected: { "The server “\($0)” did not accept the certificate." },
        .clientCertificateRequired: { "The server “\($0)” requires a client certificate." },
    ]

    private static func warning(naming host: String) -> String {
        "You might be connecting to a server that is pretending to be “\(host)” which could put your confidential information at risk."
    }
}
