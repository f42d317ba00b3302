import Foundation

/// What Ferry needs to resume a download, handed to the tenant as an opaque, signed string
/// (URLSession's `resumeData`). The tenant can read the payload (it is signed, not encrypted)
/// but cannot alter or forge it, nor use it as another tenant.
public struct ResumeDataToken: Codable, Equatable, Sendable {
    /// The request as the task was first given it (`originalRequest`), whole: the task made from
    /// the resume data sends it with the same timeout, cache policy and network properties.
    /// Members added after the first tokens were issued are optional, so those still decode.
    public struct Request: Codable, Equatable, Sendable {
        public var url: String
        public var httpMethod: String
        public var allHTTPHeaderFields: [String: String]
        public var timeoutInterval: Double?
        public var cachePolicy: RequestCachePolicy?
        public var allowsCellularAccess: Bool?
        public var allowsExpensiveNetworkAccess: Bool?
        public var allowsConstrainedNetworkAccess: Bool?
        public var networkServiceType: NetworkServiceType?

        public init(
            url: String, httpMethod: String, allHTTPHeaderFields: [String: String],
            timeoutInterval: Double? = nil, cachePolicy: RequestCachePolicy? = nil
        ) {
            self.url = url
            self.httpMethod = httpMethod
            self.allHTTPHeaderFields = allHTTPHeaderFields
            self.timeoutInterval = timeoutInterval
            self.cachePolicy = cachePolicy
        }

        /// Resume data is issued for GETs only, so there is no body to carry.
        public init(_ request: TransferRequest) {
            self.init(
                url: request.url, httpMethod: request.httpMethod, allHTTPHeaderFields: request.allHTTPHeaderFields,
                timeoutInterval: request.timeoutInterval, cachePolicy: request.cachePolicy
            )
            allowsCellularAccess = request.allowsCellularAccess
            allowsExpensiveNetworkAccess = request.allowsExpensiveNetworkAccess
            allowsConstrainedNetworkAccess = request.allowsConstrainedNetworkAccess
            networkServiceType = request.networkServiceType
        }

        /// The request of the task that continues from the resume data.
        public var transferRequest: TransferRequest {
            var request = TransferRequest(
                url: url, httpMethod: httpMethod, allHTTPHeaderFields: allHTTPHeaderFields,
                timeoutInterval: timeoutInterval, cachePolicy: cachePolicy
            )
            request.allowsCellularAccess = allowsCellularAccess
            request.allowsExpensiveNetworkAccess = allowsExpensiveNetworkAccess
            request.allowsConstrainedNetworkAccess = allowsConstrainedNetworkAccess
            request.networkServiceType = networkServiceType
            return request
        }
    }

    public var tenantID: String
    /// The task that produced the partial file.
    public var taskID: String
    /// The URL to resume from (after redirects: `currentRequest.url`).
    public var url: String
    public var validator: ResumeValidator
    /// Bytes of the body already in the partial file: the `N` of `Range: bytes=N-`.
    public var bytesOnDisk: Int64
    public var expectedTotalBytes: Int64?
    /// An opaque reference to the partial file that Ferry chose; never a tenant-chosen path.
    public var partialFile: String
    public var originalRequest: Request
    public var createdAt: Date

    public init(
        tenantID: String,
        taskID: String,
        url: String,
        validator: ResumeValidator,
        bytesOnDisk: Int64,
        expectedTotalBytes: Int64?,
        partialFile: String,
        originalRequest: Request,
        createdAt: Date
    ) {
        self.tenantID = tenantID
        self.taskID = taskID
        self.url = url
        self.validator = validator
        self.bytesOnDisk = bytesOnDisk
        self.expectedTotalBytes = expectedTotalBytes
        self.partialFile = partialFile
        self.originalRequest = originalRequest
        self.createdAt = createdAt
    }
}
