import Foundation

/// `URLSessionTaskMetrics`.
public struct TaskMetrics: Codable, Sendable, Equatable {
    public struct Interval: Codable, Sendable, Equatable {
        public var start: Date
        public var duration: Double

        public init(start: Date, duration: Double) {
            self.start = start
            self.duration = duration
        }
    }

    public var taskInterval: Interval
    public var redirectCount: Int
    public var transactionMetrics: [TransactionMetrics]

    public init(taskInterval: Interval, redirectCount: Int, transactionMetrics: [TransactionMetrics]) {
        self.taskInterval = taskInterval
        self.redirectCount = redirectCount
        self.transactionMetrics = transactionMetrics
    }
}

/// `URLSessionTaskTransactionMetrics`: one request/response exchange of a task.
public struct TransactionMetrics: Codable, Sendable, Equatable {
    /// `URLSessionTaskMetrics.ResourceFetchType`.
    public enum ResourceFetchType: String, Codable, Sendable {
        case networkLoad
        case localCache
    }

    public var request: TransferRequest
    public var response: HTTPResponseSnapshot?
    public var resourceFetchType: ResourceFetchType
    public var fetchStartDate: Date?
    public var domainLookupStartDate: Date?
    public var domainLookupEndDate: Date?
    public var connectStartDate: Date?
    public var secureConnectionStartDate: Date?
    public var secureConnectionEndDate: Date?
    public var connectEndDate: Date?
    public var requestStartDate: Date?
    public var requestEndDate: Date?
    public var responseStartDate: Date?
    public var responseEndDate: Date?
    public var networkProtocolName: String?
    public var isProxyConnection: Bool
    public var isReusedConnection: Bool
    public var countOfRequestHeaderBytesSent: Int64
    public var countOfRequestBodyBytesSent: Int64
    public var countOfResponseHeaderBytesReceived: Int64
    public var countOfResponseBodyBytesReceived: Int64
    /// Never set by Ferry (its own address is not the tenant's to know); kept for the shape.
    public var localAddress: String?
    public var localPort: Int?
    public var remoteAddress: String?
    public var remotePort: Int?

    public init(request: TransferRequest, response: HTTPResponseSnapshot?, resourceFetchType: ResourceFetchType) {
        self.request = request
        self.response = response
        self.resourceFetchType = resourceFetchType
        self.isProxyConnection = false
        self.isReusedConnection = false
        self.countOfRequestHeaderBytesSent = 0
        self.countOfRequestBodyBytesSent = 0
        self.countOfResponseHeaderBytesReceived = 0
        self.countOfResponseBodyBytesReceived = 0
    }
}
