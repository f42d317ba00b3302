import Foundation

/// A task's error in URLSession's model, as the API shows it:
/// `{domain, code, localizedDescription, failingURL, resumeData?, reason?}`.
///
/// HTTP status codes of the origin are not errors (the task completes with its response),
/// exactly as in URLSession; this carries transport, TLS, file and policy failures.
public struct TransferError: Error, Codable, Equatable, Sendable {
    /// Always `NSURLErrorDomain` for errors Ferry makes.
    public var domain: String
    public var code: Int
    public var localizedDescription: String
    public var failingURL: String?
    /// A resume data token when the transfer can be resumed (`cancelByProducingResumeData`,
    /// or a download interrupted by the service stopping).
    public var resumeData: String?
    /// Ferry's own explanation where the code alone would mislead, e.g.
    /// "refused by policy: 127.0.0.1 is loopback and not in FERRY_ALLOW_NETWORKS".
    public var reason: String?
    /// The failure plausibly comes from the network rather than from the origin (unreachable
    /// network or host, a connect or DNS lookup that timed out): what `waitsForConnectivity`
    /// waits out. Known only to the owner that saw the failure; not part of the API's error.
    public var isTransientConnectivityFailure = false
    /// The request's own failure, not the network's or the origin's (a cache-only request with
    /// nothing cached answers -1009): another attempt meets it again, so none is made. Not
    /// encoded, as the flag above.
    public var isFinal = false

    public static let urlErrorDomain = "NSURLErrorDomain"

    enum CodingKeys: String, CodingKey {
        case domain, code, localizedDescription, failingURL, resumeData, reason
    }

    public init(code: URLErrorCode, failingURL: String?, reason: String? = nil, resumeData: String? = nil) {
        self.domain = Self.urlErrorDomain
        self.code = code.rawValue
        let host = failingURL.flatMap { URL(string: $0)?.host }
        self.localizedDescription = code.localizedDescription(host: host)
        self.failingURL = failingURL
        self.resumeData = resumeData
        self.reason = reason
    }

    /// The code as a `URLErrorCode` (meaningful when `domain` is `NSURLErrorDomain`).
    public var urlErrorCode: URLErrorCode {
        URLErrorCode(rawValue: code)
    }
}

extension TransferError: CustomStringConvertible {
    public var description: String {
        var text = "\(domain) \(code): \(localizedDescription)"
        if let reason { text += " (\(reason))" }
        return text
    }
}
