/// `URLRequest`, as a task's `originalRequest` and `currentRequest`.
///
/// The body is not part of this value: it is stored apart (it can be large) and reported only by
/// its length, so listing tasks never drags request bodies along.
public struct TransferRequest: Codable, Sendable, Equatable {
    public var url: String
    public var httpMethod: String
    public var allHTTPHeaderFields: [String: String]
    /// `nil`: the session's `timeoutIntervalForRequest`.
    public var timeoutInterval: Double?
    /// `nil`: the session's `requestCachePolicy`.
    public var cachePolicy: RequestCachePolicy?
    /// The length of the request body, when there is one.
    public var httpBodyLength: Int64?
    /// URLRequest's network access properties: shown back when given (nil: URLRequest's
    /// default), with no effect here, as the session's are.
    public var allowsCellularAccess: Bool?
    public var allowsExpensiveNetworkAccess: Bool?
    public var allowsConstrainedNetworkAccess: Bool?
    public var networkServiceType: NetworkServiceType?

    public init(
        url: String,
        httpMethod: String = "GET",
        allHTTPHeaderFields: [String: String] = [:],
        timeoutInterval: Double? = nil,
        cachePolicy: RequestCachePolicy? = nil,
        httpBodyLength: Int64? = nil
    ) {
        self.url = url
        self.httpMethod = httpMethod
        self.allHTTPHeaderFields = allHTTPHeaderFields
        self.timeoutInterval = timeoutInterval
        self.cachePolicy = cachePolicy
        self.httpBodyLength = httpBodyLength
    }

    /// The header value for `name`, compared case-insensitively as HTTP does.
    public func value(forHTTPHeaderField name: String) -> String? {
        let lowered = name.lowercased()
        return allHTTPHeaderFields.first { $0.key.lowercased() == lowered }?.value
    }
}
