/// How URLSession turns a redirect response into the next request.
public enum RedirectPolicy {
    /// URLSession follows at most 16 redirects, then fails with -1007 (httpTooManyRedirects).
    public static let maximumRedirects = 16

    /// A request's header fields (lower-cased) that carry credentials for its origin: dropped
    /// when a redirect leads to another origin.
    public static let credentialFields: Set<String> = ["authorization", "cookie", "proxy-authorization"]
    /// The same for the session's `httpAdditionalHeaders`, which apply to the task's own origin.
    public static let sessionCredentialFields: Set<String> = ["authorization", "cookie"]

    public struct NextRequest: Sendable, Equatable {
        public var request: TransferRequest
        /// Whether the request body is sent again (307 and 308 keep it).
        public var keepsBody: Bool
    }

    /// The request that follows a `statusCode` redirect to `location` (already resolved to an
    /// absolute URL). `originChanged`: scheme, host or port differ from the previous request's.
    public static func nextRequest(after request: TransferRequest, statusCode: Int, location: String, originChanged: Bool) -> NextRequest {
        var next = request
        next.url = location
        var keepsBody = request.httpBodyLength != nil
        let method = request.httpMethod.uppercased()
        switch statusCode {
        case 303 where method != "HEAD" && method != "GET":
            next.httpMethod = "GET"
            keepsBody = false
        case 301 where method == "POST", 302 where method == "POST":
            next.httpMethod = "GET"
            keepsBody = false
        default:
            break
        }
        var dropped: Set<String> = []
        if !keepsBody {
            next.httpBodyLength = nil
            dropped.formUnion(["content-type", "content-encoding", "content-language", "content-location"])
        }
        if originChanged {
            // Credentials meant for one origin must not travel to another.
            dropped.formUnion(credentialFields)
        }
        next.allHTTPHeaderFields = next.allHTTPHeaderFields.filter { !dropped.contains($0.key.lowercased()) }
        return NextRequest(request: next, keepsBody: keepsBody)
    }
}

extension TransferRequest {
    /// The request without the header fields that carry credentials for its origin.
    public var withoutCredentials: TransferRequest {
        var request = self
        request.allHTTPHeaderFields = allHTTPHeaderFields.filter { !RedirectPolicy.credentialFields.contains($0.key.lowercased()) }
        return request
    }
}
