/// One POST for the transport thread.
struct WebhookHTTPRequest: Sendable {
    /// Whose endpoint: each tenant's requests keep to connections of their own.
    var tenantID: String
    var url: String
    var headerLines: [String]
    var body: [UInt8]
    /// The whole exchange, connection included.
    var timeout: Duration
}

/// What came back. Bodies are read up to the transport's bound and the rest discarded.
struct WebhookHTTPResult: Sendable {
    var statusCode: Int?
    /// The raw `Retry-After` value of the final response.
    var retryAfter: String?
    var body: [UInt8]
    /// The body was longer than what was kept.
    var isBodyTruncated: Bool
    var failure: WebhookTransportFailure?
    var duration: Duration
}

/// Why no usable answer came back.
enum WebhookTransportFailure: Sendable, Equatable, CustomStringConvertible {
    case timedOut(Duration)
    /// The address policy refused the endpoint's address (SSRF guard).
    case refused(reason: String)
    /// DNS, connect, TLS or protocol failure, in curl's words.
    case transport(String)
    case shuttingDown

    var description: String {
        switch self {
        case .timedOut(let limit): "no complete answer within \(limit.wholeMilliseconds) ms"
        case .refused(let reason): reason
        case .transport(let detail): detail
        case .shuttingDown: "Ferry was shutting down"
        }
    }
}
